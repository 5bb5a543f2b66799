package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/podvisor/podvisor/api"
	"github.com/podvisor/podvisor/internal/control"
)

// execStream runs req (-i, -t) over the control socket's framed stream
// (docs/operate.md#exec): with -it this terminal in raw mode, its size
// forwarded at every SIGWINCH; with -i what in reads goes to the command
// and its end closes the command's stdin. It returns the command's exit
// code. There are no detach keys: the command's end is the session's end
// (a detached exec would have nobody to take its output), and every key
// goes to the command.
func execStream(path string, req api.ExecRequest, in *os.File, stdout, stderr io.Writer) int {
	inFd := int(in.Fd())
	inTerm := isTerminal(inFd)
	if req.TTY && req.Stdin && !inTerm {
		fmt.Fprintln(stderr, "podvisor exec: -t with -i needs a terminal as input, and stdin is not one: use -i alone to feed the command")
		return 1
	}
	sizeFd := -1 // whose window size the command's terminal follows
	if req.TTY {
		if inTerm {
			sizeFd = inFd
		} else if f, ok := stdout.(*os.File); ok && isTerminal(int(f.Fd())) {
			sizeFd = int(f.Fd())
		}
		if sizeFd >= 0 {
			req.Rows, req.Cols, _ = terminalSize(sizeFd)
		}
	}
	// A signal to exec (without a terminal in raw mode: Ctrl-C too) ends
	// the stream; podvisor then kills the command.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		select {
		case sig := <-sigs:
			cancel(interrupted{sig.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	conn, hello, code, err := control.ExecStream(ctx, controlClient(path), req)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor exec: %v\n", err)
		return code
	}
	defer conn.Close()
	raw := req.TTY && req.Stdin
	if raw {
		restore, err := makeRaw(inFd)
		if err != nil {
			fmt.Fprintf(stderr, "podvisor exec: %v\n", err)
			return 1
		}
		defer restore()
	}
	if sizeFd >= 0 {
		stop := forwardSize(sizeFd, func(rows, cols uint16) {
			_ = control.WriteFrame(conn, control.FrameResize, control.ResizePayload(rows, cols))
		})
		defer stop()
	}
	if hello.Writer {
		go sendInput(conn, in)
	}
	stopped := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopped()
	code, err = execOutput(conn, stdout, stderr, raw)
	var sig interrupted
	if errors.As(context.Cause(ctx), &sig) {
		printNotice(stderr, "podvisor exec: "+sig.Error(), raw)
		return 128 + int(sig.sig)
	}
	if err != nil {
		printNotice(stderr, "podvisor exec: "+err.Error(), raw)
	}
	return code
}

// sendInput sends what in reads as data frames, then the end of input.
func sendInput(conn io.Writer, in io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 && control.WriteFrame(conn, control.FrameData, buf[:n]) != nil {
			return
		}
		if err != nil {
			_ = control.WriteFrame(conn, control.FrameEOF, nil)
			return
		}
	}
}

// execOutput copies the command's output until its exit frame, and
// returns its exit code; an error is a stream that ended without one.
func execOutput(conn io.Reader, stdout, stderr io.Writer, raw bool) (int, error) {
	for {
		f, err := control.ReadFrame(conn)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the connection to podvisor ended before the command's exit code came")
			}
			return 1, err
		}
		switch f.Type {
		case control.FrameData:
			_, _ = stdout.Write(f.Payload)
		case control.FrameStderr:
			_, _ = stderr.Write(f.Payload)
		case control.FrameNotice:
			printNotice(stderr, "podvisor: "+string(f.Payload), raw)
		case control.FrameExit:
			code, why, err := control.ParseExit(f.Payload)
			if err == nil && why != "" {
				err = errors.New(why)
			}
			return code, err
		}
	}
}

// interrupted: a signal to podvisor exec ended the stream (podvisor then
// kills the command); exec exits 128+N as the command would have.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string {
	return "interrupted by " + i.sig.String() + ": podvisor kills the command"
}
