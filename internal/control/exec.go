package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/podvisor/podvisor/api"
)

// Execer runs a command in a process's context for POST /v1/exec
// (podvisor exec); internal/app implements it with the launcher.
type Execer interface {
	// Exec runs req.Command as process req.Name runs (its environment,
	// user, working directory, cgroup and limits), with a terminal
	// (req.TTY) or stdin forwarded (req.Stdin) as asked, its output to
	// stdout and stderr (stderr unused with a terminal); started is
	// called with its pid and input once it runs. It returns the
	// command's exit code once it exited; ctx ending (the client went
	// away) kills it. An error means it did not start, with the code to
	// exit with.
	Exec(ctx context.Context, req ExecRequest, stdout, stderr io.Writer, started func(pid int, in ExecInput)) (int, error)
}

// ExecInput is a running command's input: its terminal or stdin pipe.
// Write refuses when the request did not ask for stdin; Close ends a
// pipe's input; Resize sets a terminal's size (nothing without one).
type ExecInput interface {
	io.WriteCloser
	Resize(rows, cols uint16) error
}

// The exec endpoint's request and answer lines (package api).
type (
	ExecRequest = api.ExecRequest
	ExecFrame   = api.ExecFrame
)

// ExecProtocol is the Upgrade token of POST /v1/exec with a terminal or
// stdin (podvisor exec -t, -i).
const ExecProtocol = "podvisor-exec"

// maxExecArgs bounds a command's size (argv and its strings).
const maxExecArgs = 4096

// ExecHandler serves POST /v1/exec for e: JSON lines, or with the
// upgrade to ExecProtocol, frames both ways (serveExecStream).
func ExecHandler(e Execer, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The whole body is read: an upgraded stream begins after it.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err == nil && len(body) > maxBody {
			err = fmt.Errorf("more than %d bytes", maxBody)
		}
		var req ExecRequest
		if err == nil {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			err = dec.Decode(&req)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, Response{Error: "bad request body: " + err.Error()})
			return
		}
		if req.Name == "" || len(req.Command) == 0 || len(req.Command) > maxExecArgs || req.Command[0] == "" {
			writeJSON(w, http.StatusBadRequest, Response{Error: "want a process name and a command: podvisor exec NAME -- CMD [ARG...]"})
			return
		}
		if r.Header.Get("Upgrade") == ExecProtocol {
			serveExecStream(w, e, req, log)
			return
		}
		if req.TTY || req.Stdin {
			writeJSON(w, http.StatusBadRequest, Response{Error: "a terminal (tty) or stdin needs the stream: send the headers Connection: Upgrade and Upgrade: " + ExecProtocol})
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		fw := &frameWriter{w: w}
		code, err := e.Exec(r.Context(), req, fw.stream("stdout"), fw.stream("stderr"),
			func(pid int, _ ExecInput) { fw.send(ExecFrame{Pid: pid}) })
		last := ExecFrame{ExitCode: &code}
		if err != nil {
			last.Error = err.Error()
			log.Info("exec refused", "process", req.Name, "err", err)
		}
		fw.send(last)
	})
}

// serveExecStream runs req over an upgraded connection: the hello with
// the pid once the command runs, its output as data (and stderr) frames,
// last an exit frame; the client's data, sizes and end of input go to
// the command. The client going away kills the command.
func serveExecStream(w http.ResponseWriter, e Execer, req ExecRequest, log *slog.Logger) {
	conn, brw, err := upgrade(w, ExecProtocol)
	if err != nil {
		return
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Once the client is gone, output to it fails at once instead of
	// holding the command's copies up.
	defer context.AfterFunc(ctx, func() { _ = conn.SetWriteDeadline(time.Now()) })()
	out := &streamWriter{w: brw.Writer}
	inputs := make(chan ExecInput, 1)
	go func() {
		defer cancel() // the client went away (or sent garbage): kill the command
		var in ExecInput
		select {
		case in = <-inputs:
		case <-ctx.Done():
			return
		}
		told := false
		note := func(err error) {
			if !told {
				told = true
				_ = out.send(FrameNotice, []byte(err.Error()))
			}
		}
		readInput(ctx, brw.Reader, func(p []byte) error { _, err := in.Write(p); return err }, in.Resize, in.Close, note)
	}()
	code, err := e.Exec(ctx, req, out.stream(FrameData), out.stream(FrameStderr), func(pid int, in ExecInput) {
		hello, _ := json.Marshal(Hello{TTY: req.TTY, Writer: req.Stdin, Pid: pid})
		_ = out.send(FrameHello, hello)
		inputs <- in
	})
	last := ExecFrame{ExitCode: &code}
	if err != nil {
		last.Error = err.Error()
		log.Info("exec refused", "process", req.Name, "err", err)
	}
	b, _ := json.Marshal(last)
	_ = out.send(FrameExit, b)
}

// streamWriter writes whole frames, each flushed at once (a keystroke's
// echo is one frame), from the output copiers and the handler.
type streamWriter struct {
	mu sync.Mutex // guards w
	w  *bufio.Writer
}

func (s *streamWriter) send(typ byte, p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(p) > MaxFrame {
		if err := WriteFrame(s.w, typ, p[:MaxFrame]); err != nil {
			return err
		}
		p = p[MaxFrame:]
	}
	if err := WriteFrame(s.w, typ, p); err != nil {
		return err
	}
	return s.w.Flush()
}

// stream is an io.Writer of frames of one type.
func (s *streamWriter) stream(typ byte) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		if err := s.send(typ, p); err != nil {
			return 0, err
		}
		return len(p), nil
	})
}

// ExecStream starts req (with TTY or Stdin) through the socket up
// reaches. The returned stream carries frames (ReadFrame, WriteFrame):
// the hello is already read, with the command's pid. A refusal (unknown
// process, a command that did not start) is an error, with the exit code
// to exit with.
func ExecStream(ctx context.Context, up Upgrader, req ExecRequest) (io.ReadWriteCloser, Hello, int, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, Hello{}, 1, err
	}
	rw, err := up.UpgradeRequest(ctx, http.MethodPost, "/v1/exec", ExecProtocol, body)
	if err != nil {
		return nil, Hello{}, 1, err
	}
	f, err := ReadFrame(rw)
	if err == nil && f.Type == FrameExit {
		code, msg, perr := ParseExit(f.Payload)
		rw.Close()
		if perr != nil {
			return nil, Hello{}, 1, perr
		}
		if msg == "" {
			msg = fmt.Sprintf("the command ended (exit code %d) before it was reported running", code)
		}
		return nil, Hello{}, code, errors.New(msg)
	}
	var h Hello
	if err == nil && (f.Type != FrameHello || json.Unmarshal(f.Payload, &h) != nil) {
		err = fmt.Errorf("exec: expected a hello frame, got type %d", f.Type)
	}
	if err != nil {
		rw.Close()
		return nil, Hello{}, 1, err
	}
	return rw, h, 0, nil
}

// ParseExit decodes an exit frame's payload: the exit code, and why the
// command did not start ("" when it ran).
func ParseExit(p []byte) (code int, why string, err error) {
	var fr ExecFrame
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fr); err != nil {
		return 1, "", fmt.Errorf("exec: bad exit frame: %w", err)
	}
	if fr.ExitCode == nil {
		return 1, "", errors.New("exec: exit frame without an exit code")
	}
	if *fr.ExitCode < 0 || *fr.ExitCode > 255 {
		return 1, "", fmt.Errorf("exec: exit code %d out of 0..255", *fr.ExitCode)
	}
	return *fr.ExitCode, fr.Error, nil
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
