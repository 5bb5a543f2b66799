package control

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/podvisor/podvisor/api"
)

// Execer runs a command in a process's context for POST /v1/exec
// (podvisor exec); internal/app implements it with the launcher.
type Execer interface {
	// Exec runs command as process name runs (its environment, user,
	// working directory), its output to stdout and stderr; started is
	// called with its pid. It returns the command's exit code once it
	// exited; ctx ending (the client went away) kills it. An error means
	// it did not start, with the code to exit with.
	Exec(ctx context.Context, name string, command []string, stdout, stderr io.Writer, started func(pid int)) (int, error)
}

// The exec endpoint's request and answer lines (package api).
type (
	ExecRequest = api.ExecRequest
	ExecFrame   = api.ExecFrame
)

// maxExecArgs bounds a command's size (argv and its strings).
const maxExecArgs = 4096

// ExecHandler serves POST /v1/exec for e.
func ExecHandler(e Execer, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req ExecRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, Response{Error: "bad request body: " + err.Error()})
			return
		}
		if req.Name == "" || len(req.Command) == 0 || len(req.Command) > maxExecArgs || req.Command[0] == "" {
			writeJSON(w, http.StatusBadRequest, Response{Error: "want a process name and a command: podvisor exec NAME -- CMD [ARG...]"})
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		fw := &frameWriter{w: w}
		code, err := e.Exec(r.Context(), req.Name, req.Command, fw.stream("stdout"), fw.stream("stderr"),
			func(pid int) { fw.send(ExecFrame{Pid: pid}) })
		last := ExecFrame{ExitCode: &code}
		if err != nil {
			last.Error = err.Error()
			log.Info("exec refused", "process", req.Name, "err", err)
		}
		fw.send(last)
	})
}

// frameWriter writes ExecFrames, one whole line at a time, from the two
// output copiers, flushing each so that output arrives as it comes.
type frameWriter struct {
	mu sync.Mutex // guards w: frames from stdout and stderr interleave whole
	w  http.ResponseWriter
}

func (f *frameWriter) send(fr ExecFrame) {
	b, _ := json.Marshal(fr)
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = f.w.Write(append(b, '\n'))
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// stream is an io.Writer of frames of one stream.
func (f *frameWriter) stream(name string) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		f.send(ExecFrame{Stream: name, Data: p})
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
