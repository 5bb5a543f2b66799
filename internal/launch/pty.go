package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/proc"
)

// Default terminal size until an attacher sends its own (a terminal of
// 0x0 confuses full-screen programs).
const (
	defaultRows = 24
	defaultCols = 80
)

// openPty opens a pseudo-terminal pair of rows x cols. The master is
// non-blocking (read through Go's poller, so closing it ends a read); the
// slave is for the child. With owner set the slave belongs to that user, as
// login(1) and sshd arrange, so the child may reopen it (/dev/tty works
// through the controlling terminal regardless).
func openPty(rows, cols uint16, owner *proc.Cred) (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		unix.Close(m)
		return nil, nil, fmt.Errorf("pseudo-terminal: %s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		return fail("unlock", err)
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN) // ptsname
	if err != nil {
		return fail("number", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	s, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open "+name, err)
	}
	if owner != nil {
		if err := unix.Fchown(s, int(owner.UID), int(owner.GID)); err != nil {
			unix.Close(s)
			return fail("chown "+name, err)
		}
	}
	if err := unix.IoctlSetWinsize(m, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		unix.Close(s)
		return fail("window size", err)
	}
	return os.NewFile(uintptr(m), "ptmx"), os.NewFile(uintptr(s), name), nil
}

// setWinsize sets the window size of the terminal whose master is m; the
// kernel sends its foreground process group SIGWINCH when the size
// changes. With redraw the group gets SIGWINCH even when it does not, so
// that a full-screen program redraws for a new attacher.
func setWinsize(m *os.File, rows, cols uint16, redraw bool) error {
	// Not Fd(): it would put the master in blocking mode, and a read
	// that Close cannot end.
	rc, err := m.SyscallConn()
	if err != nil {
		return err
	}
	var ioctlErr error
	err = rc.Control(func(fd uintptr) {
		ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
		if pgrp, perr := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP); redraw && ioctlErr == nil && perr == nil && pgrp > 0 {
			_ = unix.Kill(-pgrp, unix.SIGWINCH)
		}
	})
	return errors.Join(err, ioctlErr)
}

// stdio is how an incarnation's fds 0, 1 and 2 are wired: two pipes to the
// log (the default), one terminal (tty:), or the pipes plus a stdin pipe
// (stdin:).
type stdio struct {
	outR, errR int      // read ends for the log; errR is -1 with a terminal
	outW, errW *os.File // the child's ends (both the slave with a terminal)
	in         *os.File // the child's fd 0; nil: /dev/null
	master     *os.File // the terminal's master, or our end of the stdin pipe
	tty        bool
}

// openStdio opens what p's next incarnation needs; t is p's Terminal when
// p is attachable (its size is the new terminal's).
func openStdio(p *config.Process, t *Terminal) (*stdio, error) {
	w := &stdio{outR: -1, errR: -1}
	if p.TTY {
		rows, cols := t.size()
		m, s, err := openPty(rows, cols, cred(p))
		if err != nil {
			return nil, err
		}
		w.master, w.in, w.outW, w.errW, w.tty = m, s, s, s, true
		// The log's pipe: the pump reads it as any stdout; pumpTerminal
		// fills it with the terminal's text.
		if w.outR, w.outW, err = logs.OpenPipe(); err != nil {
			m.Close()
			s.Close()
			return nil, fmt.Errorf("stdout pipe: %w", err)
		}
		return w, nil
	}
	var err error
	if w.outR, w.outW, err = logs.OpenPipe(); err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if w.errR, w.errW, err = logs.OpenPipe(); err != nil {
		w.closeChild()
		w.closeOurs()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	if p.Stdin {
		r, pw, err := os.Pipe()
		if err != nil {
			w.closeChild()
			w.closeOurs()
			return nil, fmt.Errorf("stdin pipe: %w", err)
		}
		w.in, w.master = r, pw
	}
	return w, nil
}

// spec puts the child's ends in s.
func (w *stdio) spec(s *proc.Spec) {
	s.Stdin, s.Terminal = w.in, w.tty
	if w.tty {
		s.Stdout, s.Stderr = w.in, w.in // outW is the log pipe's write end, ours
		return
	}
	s.Stdout, s.Stderr = w.outW, w.errW
}

// start hands podvisor's ends over once the child runs: the log pipes to
// sink (streamFor gives each stream's settings), the terminal's master to
// pumpTerminal, the stdin pipe to t. An attachable process's output
// reaches t: raw from a terminal, line by line (the tap) from pipes.
func (w *stdio) start(sink *logs.Sink, t *Terminal, streamFor func(stream string, tap func([]byte)) logs.Stream, tap func([]byte)) {
	if w.tty {
		t.bind(w.master)
		go pumpTerminal(w.master, w.outW, t)
		sink.AttachStream(w.outR, streamFor("stdout", tap))
		return
	}
	if t != nil {
		t.bind(w.master) // nil without stdin: output only
		tap = teeLines(t, tap)
	}
	sink.AttachStream(w.outR, streamFor("stdout", tap))
	sink.AttachStream(w.errR, streamFor("stderr", tap))
}

// teeLines gives each output line to t as well as to tap (which may be nil).
func teeLines(t *Terminal, tap func([]byte)) func([]byte) {
	return func(line []byte) {
		t.output(append(line[:len(line):len(line)], '\r', '\n'))
		if tap != nil {
			tap(line)
		}
	}
}

// atExit is what is released when the child has exited: the stdin pipe's
// write end (nil when there is none; a terminal's master lives until its
// output is drained, see pumpTerminal).
func (w *stdio) atExit(t *Terminal) func() {
	if w.tty || w.master == nil {
		return nil
	}
	in := w.master
	return func() {
		t.unbind(in)
		in.Close()
	}
}

// streams is how many log streams reach EOF at the child's end.
func (w *stdio) streams() int {
	if w.errR < 0 {
		return 1
	}
	return 2
}

// closeChild closes our copies of the child's ends (after the spawn, or
// when it failed): only the child may hold them, or EOF never comes. With a
// terminal the log pipe's write end stays open: pumpTerminal owns it.
func (w *stdio) closeChild() {
	if w.in != nil {
		w.in.Close()
	}
	if w.tty {
		return
	}
	w.outW.Close()
	if w.errW != nil {
		w.errW.Close()
	}
}

// closeOurs closes podvisor's ends, when the spawn failed.
func (w *stdio) closeOurs() {
	for _, fd := range []int{w.outR, w.errR} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	if w.master != nil {
		w.master.Close()
	}
	if w.tty {
		w.outW.Close()
	}
}

// pumpTerminal copies a terminal's output: raw to t (attachers and the
// replay), as text (logs.TermText) into the log pipe. It ends when every
// holder of the slave has closed it (the master then reads EIO), closing
// the log pipe, which the pump takes as the stream's EOF. A slow log holds
// this copy up as it holds a pipe's writer; a slow attacher never does (t
// drops for it).
func pumpTerminal(master, log *os.File, t *Terminal) {
	defer log.Close()
	defer master.Close()
	defer t.unbind(master)
	var text logs.TermText
	buf := make([]byte, 8<<10) // attachQueue of these bounds an attacher's queue
	var out []byte
	logging := true
	for {
		n, err := master.Read(buf)
		if n > 0 {
			t.output(buf[:n])
			out = text.Filter(out[:0], buf[:n])
			if logging && len(out) > 0 {
				// An error: the log's reader is gone (podvisor is
				// exiting); keep draining so the child never blocks.
				_, werr := log.Write(out)
				logging = werr == nil
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
				t.notice("podvisor: reading the terminal failed: " + err.Error())
			}
			return
		}
	}
}

// withTERM adds TERM=xterm to env unless it sets TERM, as Docker does for
// a container with a terminal: curses programs need it.
func withTERM(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "TERM=") {
			return env
		}
	}
	return append(env, "TERM=xterm")
}
