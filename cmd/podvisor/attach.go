package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/control"
)

// defaultDetachKeys are docker attach's.
const defaultDetachKeys = "ctrl-p,ctrl-q"

type attachOptions struct {
	path       *string
	timeout    *time.Duration
	detachKeys *string
	readOnly   *bool
}

// attachFlags defines attach's flags (shared with the command table).
func attachFlags(fs *flag.FlagSet) attachOptions {
	var o attachOptions
	o.path, o.timeout = controlFlags(fs)
	o.detachKeys = fs.String("detach-keys", defaultDetachKeys, "the `KEYS` that detach, as docker's: ctrl-X or single characters, comma-separated")
	o.readOnly = fs.Bool("read-only", false, "only watch: what is typed is not sent (every attacher but the first is read-only anyway)")
	return o
}

// cmdAttach connects this terminal to a process's terminal (tty: true) or
// stdin pipe (stdin: true) until the detach keys, or the end of input
// without a terminal (docs/operate.md).
func cmdAttach(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("attach", stderr)
	o := attachFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "podvisor attach: want one process name")
		return exitUsage
	}
	keys, err := parseDetachKeys(*o.detachKeys)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor attach: --detach-keys: %v\n", err)
		return exitUsage
	}
	// --timeout bounds the connection's set-up only: cancelling the
	// context later would end the stream.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(*o.timeout, cancel)
	conn, hello, err := control.Attach(ctx, controlClient(*o.path), pos[0], *o.readOnly)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("no answer within %v: %w", *o.timeout, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor attach: %v\n", err)
		return 1
	}
	defer conn.Close()
	a := &attacher{conn: conn, out: stdout, errOut: stderr, keys: keys}
	return a.run(os.Stdin, pos[0], hello)
}

// attacher is one attach session on the client's side.
type attacher struct {
	conn        io.ReadWriteCloser
	out, errOut io.Writer
	keys        []byte
}

func (a *attacher) run(in *os.File, name string, hello control.Hello) int {
	fd := int(in.Fd())
	raw := hello.TTY && isTerminal(fd)
	if raw {
		restore, err := makeRaw(fd)
		if err != nil {
			fmt.Fprintf(a.errOut, "podvisor attach: %v\n", err)
			return 1
		}
		defer restore()
		stop := a.forwardSize(fd)
		defer stop()
	}
	if !hello.Writer {
		a.notice("podvisor: attached to "+name+" read-only: another attacher is the writer", raw)
	}
	ended := make(chan string, 2) // why
	go func() {
		if a.input(in) {
			ended <- "keys"
		} else {
			ended <- "eof"
		}
	}()
	go func() { a.output(raw); ended <- "lost" }()
	why := <-ended
	a.conn.Close()
	switch why {
	case "lost":
		a.notice("podvisor: the connection to podvisor ended", raw)
		return 1
	case "keys":
		a.notice("podvisor: detached from "+name+"; it keeps running", raw)
	}
	return 0
}

// notice prints a line of podvisor's own on stderr (CR LF in raw mode).
func (a *attacher) notice(msg string, raw bool) { printNotice(a.errOut, msg, raw) }

// input sends what is typed until the detach keys (true) or the end of
// input (false).
func (a *attacher) input(in io.Reader) bool {
	d := detacher{keys: a.keys}
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			out, detach := d.feed(buf[:n])
			if len(out) > 0 && control.WriteFrame(a.conn, control.FrameData, out) != nil {
				return false
			}
			if detach {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

// output copies the process's output and podvisor's notices until the
// connection ends.
func (a *attacher) output(raw bool) {
	for {
		f, err := control.ReadFrame(a.conn)
		if err != nil {
			return
		}
		switch f.Type {
		case control.FrameData:
			if _, err := a.out.Write(f.Payload); err != nil {
				return
			}
		case control.FrameNotice:
			a.notice(string(f.Payload), raw)
		}
	}
}

// forwardSize sends the terminal's size now and at every SIGWINCH.
func (a *attacher) forwardSize(fd int) (stop func()) {
	return forwardSize(fd, func(rows, cols uint16) {
		_ = control.WriteFrame(a.conn, control.FrameResize, control.ResizePayload(rows, cols))
	})
}

// parseDetachKeys reads docker's --detach-keys syntax: comma-separated
// keys, each a single character or ctrl-X (X a letter or one of @[\]^_).
func parseDetachKeys(s string) ([]byte, error) {
	var keys []byte
	for _, k := range strings.Split(s, ",") {
		switch {
		case len(k) == 1:
			keys = append(keys, k[0])
		case strings.HasPrefix(strings.ToLower(k), "ctrl-") && len(k) == 6:
			c := k[5]
			switch {
			case c >= 'a' && c <= 'z':
				keys = append(keys, c-'a'+1)
			case c >= 'A' && c <= 'Z':
				keys = append(keys, c-'A'+1)
			case strings.IndexByte("@[\\]^_", c) >= 0:
				keys = append(keys, c-'@')
			default:
				return nil, fmt.Errorf("%q: ctrl- takes a letter or one of @[\\]^_", k)
			}
		default:
			return nil, fmt.Errorf("%q is neither one character nor ctrl-X (want, say, %s)", k, defaultDetachKeys)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys")
	}
	return keys, nil
}

// detacher finds the detach keys in what is typed. Bytes that begin the
// sequence are held back until it is clear whether they complete it, then
// sent (as docker does).
type detacher struct {
	keys []byte
	n    int // how many of keys have been seen in a row
}

func (d *detacher) feed(in []byte) (out []byte, detach bool) {
	for _, b := range in {
		if b == d.keys[d.n] {
			d.n++
			if d.n == len(d.keys) {
				return out, true
			}
			continue
		}
		if d.n > 0 {
			out = append(out, d.keys[:d.n]...)
			d.n = 0
			if b == d.keys[0] {
				d.n = 1
				if len(d.keys) == 1 {
					return out, true
				}
				continue
			}
		}
		out = append(out, b)
	}
	return out, false
}
