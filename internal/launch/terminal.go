package launch

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// Terminals are the attachable processes' terminals (tty:) and stdin pipes
// (stdin:), by process name, for `podvisor attach` (docs/operate.md). A
// process's Terminal outlives its incarnations: an attacher stays attached
// across a restart and sees the next incarnation's output.
type Terminals struct {
	mu sync.Mutex
	m  map[string]*Terminal
}

// NewTerminals returns an empty set.
func NewTerminals() *Terminals { return &Terminals{m: map[string]*Terminal{}} }

// For returns name's Terminal, making it on first use. A nil set gives a
// Terminal nobody can attach to (tests, and runs without a control socket).
func (ts *Terminals) For(name string, tty bool) *Terminal {
	if ts == nil {
		return newTerminal(name, tty)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[name]
	if t == nil || t.tty != tty {
		t = newTerminal(name, tty) // a reload may have changed tty:
		ts.m[name] = t
	}
	return t
}

// ErrNotAttachable: the process has neither tty: nor stdin:, or has not
// started yet.
var ErrNotAttachable = errors.New("not attachable")

// Attach connects a new attacher to name's terminal. It is the writer if it
// did not ask for readOnly and there is none yet; else it only watches.
func (ts *Terminals) Attach(name string, readOnly bool) (*Attachment, error) {
	ts.mu.Lock()
	t := ts.m[name]
	ts.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("%s: %w: it has neither tty: true nor stdin: true (or has not started yet)", name, ErrNotAttachable)
	}
	return t.attach(readOnly), nil
}

// Limits of what is kept for attachers.
const (
	// replaySize is the recent output a new attacher is shown first, so
	// that a REPL's prompt is there (a full-screen program redraws: it is
	// sent SIGWINCH when the attacher's size arrives, see Resize).
	replaySize = 8 << 10
	// attachQueue is how many reads of output wait for one attacher; when
	// it is full the attacher misses output (a marker says so) instead of
	// holding up the process or anyone else.
	attachQueue = 128
)

// dropMarker is shown to an attacher in place of output it was too slow for.
var dropMarker = []byte("\r\n[podvisor: output dropped: this terminal fell behind]\r\n")

// Terminal is one process's terminal or stdin pipe as attachers see it.
// Its fields are guarded by mu; output fans out without blocking.
type Terminal struct {
	name string
	tty  bool

	mu     sync.Mutex
	input  *os.File // the current incarnation's master or stdin pipe; nil between
	rows   uint16
	cols   uint16
	replay []byte // the last replaySize bytes of output
	atts   map[*Attachment]struct{}
	writer *Attachment
}

func newTerminal(name string, tty bool) *Terminal {
	return &Terminal{name: name, tty: tty, rows: defaultRows, cols: defaultCols, atts: map[*Attachment]struct{}{}}
}

// size is the window size for a new incarnation: the writer's last.
func (t *Terminal) size() (rows, cols uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rows, t.cols
}

// bind makes input (a pty master or a stdin pipe) the current incarnation's.
func (t *Terminal) bind(input *os.File) {
	t.mu.Lock()
	t.input = input
	t.mu.Unlock()
}

// unbind forgets input if it is still the current one, telling attachers.
func (t *Terminal) unbind(input *os.File) {
	t.mu.Lock()
	current := t.input == input
	if current {
		t.input = nil
	}
	t.mu.Unlock()
	if current {
		t.notice("podvisor: " + t.name + " ended; still attached: a restart shows here")
	}
}

// notice shows a line from podvisor to the attachers (not the replay).
func (t *Terminal) notice(msg string) {
	b := []byte("\r\n[" + msg + "]\r\n")
	t.mu.Lock()
	defer t.mu.Unlock()
	for a := range t.atts {
		a.offer(b)
	}
}

// output keeps p for the replay and offers it to every attacher; it never
// blocks. p is copied.
func (t *Terminal) output(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= replaySize {
		t.replay = append(t.replay[:0], p[len(p)-replaySize:]...)
	} else {
		if over := len(t.replay) + len(p) - replaySize; over > 0 {
			t.replay = t.replay[:copy(t.replay, t.replay[over:])]
		}
		t.replay = append(t.replay, p...)
	}
	if len(t.atts) == 0 {
		return
	}
	b := append([]byte(nil), p...) // shared, read-only, by every attacher
	for a := range t.atts {
		a.offer(b)
	}
}

func (t *Terminal) attach(readOnly bool) *Attachment {
	a := &Attachment{t: t, out: make(chan []byte, attachQueue)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !readOnly && t.writer == nil {
		t.writer, a.writer = a, true
	}
	if len(t.replay) > 0 {
		a.out <- append([]byte(nil), t.replay...)
	}
	t.atts[a] = struct{}{}
	return a
}

// Attachment is one attacher's view of a Terminal.
type Attachment struct {
	t       *Terminal
	out     chan []byte
	writer  bool // fixed at attach
	dropped bool // guarded by t.mu: output was dropped since the last delivery
	closed  bool // guarded by t.mu
}

// offer queues b without blocking; t.mu is held, so this is the only sender.
func (a *Attachment) offer(b []byte) {
	if a.dropped {
		if cap(a.out)-len(a.out) < 2 {
			return // still full: keep dropping
		}
		a.out <- dropMarker
		a.dropped = false
	}
	select {
	case a.out <- b:
	default:
		a.dropped = true
	}
}

// Output delivers the terminal's output, the replay first. It is never
// closed; stop reading after Close.
func (a *Attachment) Output() <-chan []byte { return a.out }

// Writer reports whether this attacher's input and window size count.
func (a *Attachment) Writer() bool { return a.writer }

// TTY reports whether the process has a terminal (else a stdin pipe).
func (a *Attachment) TTY() bool { return a.t.tty }

// Input writes p to the process (its terminal, or its stdin pipe). It may
// block while the process does not read: that holds up this attacher only.
func (a *Attachment) Input(p []byte) error {
	if !a.writer {
		return errors.New("read-only: another attacher is the writer")
	}
	a.t.mu.Lock()
	in := a.t.input
	a.t.mu.Unlock()
	if in == nil {
		return fmt.Errorf("%s is not running", a.t.name)
	}
	_, err := in.Write(p)
	if errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%s is not running", a.t.name)
	}
	return err
}

// Resize sets the terminal's window size (the writer's only; the kernel
// sends the foreground process group SIGWINCH). The same size again still
// sends SIGWINCH, so that a full-screen program redraws for a new attacher.
func (a *Attachment) Resize(rows, cols uint16) error {
	if !a.writer || !a.t.tty || rows == 0 || cols == 0 {
		return nil
	}
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	same := t.rows == rows && t.cols == cols
	t.rows, t.cols = rows, cols
	if t.input == nil {
		return nil
	}
	if err := setWinsize(t.input, rows, cols, same); err != nil {
		return fmt.Errorf("window size: %w", err)
	}
	return nil
}

// Close detaches: the writer's place is free for the next attacher.
func (a *Attachment) Close() {
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	delete(t.atts, a)
	if t.writer == a {
		t.writer = nil
	}
}
