package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
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

// ExecRequest is the body of POST /v1/exec.
type ExecRequest struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
}

// ExecFrame is one line of POST /v1/exec's answer (JSON lines): first the
// pid once the command runs, then its output as it comes (stream "stdout"
// or "stderr", data base64 in JSON), last its exit code, or an error with
// the code to exit with when it did not start.
type ExecFrame struct {
	Pid      int    `json:"pid,omitempty"`
	Stream   string `json:"stream,omitempty"`
	Data     []byte `json:"data,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
}

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

// maxFrame bounds one line of the answer (a 32 KiB read, base64, JSON).
const maxFrame = 1 << 20

// Exec runs command in process name's context through the podvisor on the
// socket, copying its output to stdout and stderr, and returns its exit
// code. An error means no exit code came (not started, or the connection
// broke); code is then the one to exit with.
func (c *Client) Exec(ctx context.Context, name string, command []string, stdout, stderr io.Writer) (int, error) {
	body, err := json.Marshal(ExecRequest{Name: name, Command: command})
	if err != nil {
		return 1, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://podvisor/v1/exec", bytes.NewReader(body))
	if err != nil {
		return 1, err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(hr)
	if err != nil {
		return 1, c.dialError(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var out Response
		_ = json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out)
		if out.Error == "" {
			out.Error = "HTTP " + res.Status
		}
		return 1, fmt.Errorf("%s", out.Error)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), maxFrame)
	for sc.Scan() {
		var fr ExecFrame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			return 1, fmt.Errorf("control socket %s: bad exec frame: %w", c.Path, err)
		}
		switch {
		case fr.ExitCode != nil && fr.Error != "":
			return *fr.ExitCode, fmt.Errorf("%s", fr.Error)
		case fr.ExitCode != nil:
			return *fr.ExitCode, nil
		case fr.Stream == "stdout":
			_, _ = stdout.Write(fr.Data)
		case fr.Stream == "stderr":
			_, _ = stderr.Write(fr.Data)
		}
	}
	if err := sc.Err(); err != nil {
		return 1, fmt.Errorf("control socket %s: exec: %w", c.Path, err)
	}
	return 1, fmt.Errorf("control socket %s: the answer ended without an exit code (podvisor stopped?)", c.Path)
}
