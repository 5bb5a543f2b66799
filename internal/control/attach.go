package control

// Attach: GET /v1/attach?name=NAME[&read_only=1] with "Connection: Upgrade"
// and "Upgrade: podvisor-attach"; the answer is 101 Switching Protocols,
// after which both sides exchange frames (docs/operate.md):
//
//	type (1 byte) | length (4 bytes, big-endian, at most MaxFrame) | payload
//
//	FrameData   both ways: output to the client, input to the process
//	FrameResize client to server: rows, cols (2 bytes each, big-endian)
//	FrameHello  server to client, first: JSON {"tty": bool, "writer": bool}
//	FrameNotice server to client: a line from podvisor (read-only, dropped
//	            output, the process ended, podvisor shutting down)
//
// Refusals come before the upgrade as JSON Responses: 404 for a process
// that is unknown or not attachable, 400 for a request without the upgrade.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// AttachProtocol is the Upgrade token of an attach.
const AttachProtocol = "podvisor-attach"

// Frame types (attach uses 1-4; exec -i/-t all of them).
const (
	FrameData   byte = 1
	FrameResize byte = 2
	FrameHello  byte = 3
	FrameNotice byte = 4
	// FrameStderr server to client: the command's stderr (no terminal).
	FrameStderr byte = 5
	// FrameExit server to client, last: JSON ExecFrame {"exit_code": N}
	// (with "error" when the command did not start).
	FrameExit byte = 6
	// FrameEOF client to server, empty: the end of input (the command's
	// stdin pipe is closed).
	FrameEOF byte = 7

	lastFrame = FrameEOF
)

// MaxFrame bounds a frame's payload.
const MaxFrame = 64 << 10

// Frame is one message of an attach.
type Frame struct {
	Type    byte
	Payload []byte
}

// Hello is the server's first frame. Pid is an exec'd command's.
type Hello struct {
	TTY    bool `json:"tty"`
	Writer bool `json:"writer"`
	Pid    int  `json:"pid,omitempty"`
}

// WriteFrame writes one frame, in one Write: on a connection, frames
// written by several goroutines (keys, window sizes) never interleave, and
// a keystroke costs one system call.
func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("attach frame of %d bytes exceeds %d", len(payload), MaxFrame)
	}
	b := make([]byte, 5+len(payload))
	b[0] = typ
	binary.BigEndian.PutUint32(b[1:5], uint32(len(payload)))
	copy(b[5:], payload)
	_, err := w.Write(b)
	return err
}

// ReadFrame reads one frame. An unknown type or an oversized length is an
// error (the stream cannot be trusted after it).
func ReadFrame(r io.Reader) (Frame, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Frame{}, err
	}
	if h[0] < FrameData || h[0] > lastFrame {
		return Frame{}, fmt.Errorf("attach frame: unknown type %d", h[0])
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > MaxFrame {
		return Frame{}, fmt.Errorf("attach frame: length %d exceeds %d", n, MaxFrame)
	}
	f := Frame{Type: h[0], Payload: make([]byte, n)}
	if _, err := io.ReadFull(r, f.Payload); err != nil {
		return Frame{}, fmt.Errorf("attach frame: %w", noEOF(err))
	}
	if f.Type == FrameResize && n != 4 {
		return Frame{}, fmt.Errorf("attach frame: resize of %d bytes, want 4", n)
	}
	if f.Type == FrameEOF && n != 0 {
		return Frame{}, fmt.Errorf("attach frame: end of input with %d bytes, want none", n)
	}
	return f, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ResizeOf decodes a resize frame's payload (ReadFrame checked its size).
func ResizeOf(f Frame) (rows, cols uint16) {
	return binary.BigEndian.Uint16(f.Payload[:2]), binary.BigEndian.Uint16(f.Payload[2:])
}

// ResizePayload encodes a window size.
func ResizePayload(rows, cols uint16) []byte {
	var b [4]byte
	binary.BigEndian.PutUint16(b[:2], rows)
	binary.BigEndian.PutUint16(b[2:], cols)
	return b[:]
}

// Attachment is one attacher's connection to a process's terminal or stdin
// pipe (internal/launch's Attachment).
type Attachment interface {
	Output() <-chan []byte
	Writer() bool
	TTY() bool
	Input(p []byte) error
	Resize(rows, cols uint16) error
	Close()
}

// AttachBackend is what attach needs beyond Backend. A Backend without it
// answers 404 to every attach.
type AttachBackend interface {
	// Attach connects to name's terminal; an error names an unknown or
	// unattachable process.
	Attach(name string, readOnly bool) (Attachment, error)
}

func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	ab, ok := s.backend.(AttachBackend)
	if !ok {
		writeJSON(w, http.StatusNotFound, Response{Error: "this podvisor has no attachable processes"})
		return
	}
	if r.Header.Get("Upgrade") != AttachProtocol {
		writeJSON(w, http.StatusBadRequest, Response{Error: "attach needs the headers Connection: Upgrade and Upgrade: " + AttachProtocol})
		return
	}
	name := r.URL.Query().Get("name")
	a, err := ab.Attach(name, r.URL.Query().Get("read_only") == "1")
	if err != nil {
		writeJSON(w, http.StatusNotFound, Response{Error: err.Error()})
		return
	}
	defer a.Close()
	conn, brw, err := upgrade(w, AttachProtocol)
	if err != nil {
		return
	}
	defer conn.Close()
	s.log.Info("attached", "name", name, "writer", a.Writer())
	defer s.log.Info("detached", "name", name)
	hello, _ := json.Marshal(Hello{TTY: a.TTY(), Writer: a.Writer()})
	if WriteFrame(brw, FrameHello, hello) != nil || brw.Flush() != nil {
		return
	}
	ctx, cancel := context.WithCancel(s.closed)
	defer cancel()
	notes := make(chan string, 4)
	go attachInput(ctx, cancel, brw.Reader, a, notes)
	s.serveAttach(ctx, brw.Writer, a, notes)
}

// serveAttach writes output and notices until ctx ends. A slow client
// blocks only here: the Attachment drops output for it meanwhile.
func (s *Server) serveAttach(ctx context.Context, w *bufio.Writer, a Attachment, notes <-chan string) {
	for {
		var err error
		select {
		case <-ctx.Done():
			if s.closed.Err() != nil {
				_ = WriteFrame(w, FrameNotice, []byte("podvisor is shutting down"))
				_ = w.Flush()
			}
			return
		case b := <-a.Output():
			err = WriteFrame(w, FrameData, b)
		case n := <-notes:
			err = WriteFrame(w, FrameNotice, []byte(n))
		}
		// Flush only when nothing more is queued: one write for a burst.
		if err == nil && len(a.Output()) == 0 {
			err = w.Flush()
		}
		if err != nil {
			return
		}
	}
}

// attachInput reads the client's frames until it goes away, then cancels.
func attachInput(ctx context.Context, cancel context.CancelFunc, r *bufio.Reader, a Attachment, notes chan<- string) {
	defer cancel()
	told := false
	note := func(err error) {
		if told && !a.Writer() {
			return // a reader is told once that its keys go nowhere
		}
		told = true
		select {
		case notes <- err.Error():
		default:
		}
	}
	readInput(ctx, r, a.Input, a.Resize, nil, note)
}

// upgrade takes the connection over from the HTTP server and answers 101
// Switching Protocols to protocol. On an error the client has been
// answered.
func upgrade(w http.ResponseWriter, protocol string) (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, Response{Error: "upgrade: " + err.Error()})
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Time{}) // the header timeout does not apply to the stream
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + protocol + "\r\n\r\n")
	return conn, brw, nil
}

// readInput reads a client's frames until ctx ends or the stream does:
// data goes to input, window sizes to resize, the end of input to eof
// (nil: ignored). A refusal of data or a size is given to note.
func readInput(ctx context.Context, r io.Reader, input func([]byte) error, resize func(rows, cols uint16) error, eof func() error, note func(error)) {
	for ctx.Err() == nil {
		f, err := ReadFrame(r)
		if err != nil {
			return
		}
		switch f.Type {
		case FrameData:
			err = input(f.Payload)
		case FrameResize:
			err = resize(ResizeOf(f))
		case FrameEOF:
			if eof != nil {
				err = eof()
			}
		}
		if err != nil {
			note(err)
		}
	}
}

// Upgrader opens an upgraded connection on the control socket (the
// client package's Client): method path with body (nil: none), asking
// to switch to protocol.
type Upgrader interface {
	UpgradeRequest(ctx context.Context, method, path, protocol string, body []byte) (io.ReadWriteCloser, error)
}

// Attach connects to name's terminal through the socket up reaches. The
// returned stream carries frames (ReadFrame, WriteFrame); the Hello is
// already read.
func Attach(ctx context.Context, up Upgrader, name string, readOnly bool) (io.ReadWriteCloser, Hello, error) {
	v := url.Values{"name": {name}}
	if readOnly {
		v.Set("read_only", "1")
	}
	rw, err := up.UpgradeRequest(ctx, http.MethodGet, "/v1/attach?"+v.Encode(), AttachProtocol, nil)
	if err != nil {
		return nil, Hello{}, err
	}
	h, err := readHello(rw)
	if err != nil {
		rw.Close()
		return nil, Hello{}, err
	}
	return rw, h, nil
}

// readHello reads the server's first frame.
func readHello(r io.Reader) (Hello, error) {
	f, err := ReadFrame(r)
	if err != nil {
		return Hello{}, err
	}
	var h Hello
	if f.Type != FrameHello || json.Unmarshal(f.Payload, &h) != nil {
		return Hello{}, fmt.Errorf("attach: expected a hello frame, got type %d", f.Type)
	}
	return h, nil
}
