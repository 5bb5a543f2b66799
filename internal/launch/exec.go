package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// execOutputGrace bounds the wait for an exec'd command's pipes once it
// exited and its group was killed (a process that left the group may
// still hold them).
const execOutputGrace = 250 * time.Millisecond

// ExecIO is how an exec'd command's standard streams are wired.
type ExecIO struct {
	Stdout, Stderr io.Writer // Stderr is unused with TTY: a terminal merges them
	// Stdin: the command reads what the caller writes to ExecInput (a
	// pipe, or the terminal with TTY); else stdin is /dev/null (without
	// TTY) or a terminal nobody types into.
	Stdin bool
	// TTY: a pseudo-terminal of Rows x Cols (80x24 for 0) is the
	// command's stdin, stdout and stderr and its controlling terminal.
	TTY        bool
	Rows, Cols uint16
	// Started is called with the command's pid and input once it runs.
	Started func(pid int, in *ExecInput)
}

// ExecInput is a running exec'd command's input: its terminal's master
// or its stdin pipe. Its methods may be called from any goroutine.
type ExecInput struct {
	f     *os.File // nil: the command reads nothing from the caller
	tty   bool
	stdin bool
}

// errNoInput refuses input to a command that was not given any (-t
// without -i, or neither).
var errNoInput = errors.New("the command's stdin is not forwarded (podvisor exec -i)")

// Write gives p to the command. It blocks while the command does not read.
func (in *ExecInput) Write(p []byte) (int, error) {
	if !in.stdin {
		return 0, errNoInput
	}
	n, err := in.f.Write(p)
	if errors.Is(err, os.ErrClosed) {
		err = errors.New("the command ended")
	}
	return n, err
}

// Close ends the input: the command reads EOF from its stdin pipe. A
// terminal stays open (on a terminal the end of input is a key, Ctrl-D,
// which the caller types).
func (in *ExecInput) Close() error {
	if in.tty || !in.stdin {
		return nil
	}
	return in.f.Close()
}

// Resize sets the terminal's window size (the kernel sends the command's
// foreground process group SIGWINCH); without a terminal it does nothing.
func (in *ExecInput) Resize(rows, cols uint16) error {
	if !in.tty || rows == 0 || cols == 0 {
		return nil
	}
	if err := setWinsize(in.f, rows, cols, false); err != nil {
		return fmt.Errorf("window size: %w", err)
	}
	return nil
}

// execSpec is how `podvisor exec` runs argv in p's context: p's
// environment as Env computes it (not what belongs to one incarnation:
// NOTIFY_SOCKET, LISTEN_*, WATCHDOG_*), p's user and groups, working
// directory (inside its root: when it has one) and oom_score_adj, its limits, umask, no_new_privs and ambient
// capabilities (through the exec shim, as p gets them), in a process group
// of its own, killed if podvisor dies. It never has more privilege than
// p: whatever p runs with, it runs with. Its cgroup is execCgroup's.
func (l *Launcher) execSpec(p *config.Process, argv []string) proc.Spec {
	spec := proc.Spec{Argv: argv, Env: l.Env(p), Dir: p.WorkingDir, Root: p.Root, Cred: cred(p), DeathSignal: syscall.SIGKILL, OOMScoreAdj: p.OOMScoreAdj}
	withPrivileges(&spec, p)
	return spec
}

// execStdio is an exec'd command's stdio: its ends, and podvisor's.
type execStdio struct {
	in, out, errw *os.File // the child's fds 0, 1, 2 (nil: /dev/null)
	outR, errR    *os.File // podvisor's read ends (the master with a terminal; errR nil then)
	input         *ExecInput
}

// openExecStdio opens what sio asks for: a terminal (owned by owner, so
// that the command may reopen it), or pipes for stdout and stderr and, with
// Stdin, one for stdin.
func openExecStdio(sio ExecIO, owner *proc.Cred) (*execStdio, error) {
	w := &execStdio{}
	if sio.TTY {
		rows, cols := sio.Rows, sio.Cols
		if rows == 0 || cols == 0 {
			rows, cols = defaultRows, defaultCols
		}
		m, s, err := openPty(rows, cols, owner)
		if err != nil {
			return nil, err
		}
		w.in, w.out, w.errw, w.outR = s, s, s, m
		w.input = &ExecInput{f: m, tty: true, stdin: sio.Stdin}
		return w, nil
	}
	var err error
	if w.outR, w.out, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if w.errR, w.errw, err = os.Pipe(); err != nil {
		w.closeChild()
		w.closeOurs()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	w.input = &ExecInput{}
	if sio.Stdin {
		r, pw, err := os.Pipe()
		if err != nil {
			w.closeChild()
			w.closeOurs()
			return nil, fmt.Errorf("stdin pipe: %w", err)
		}
		w.in = r
		w.input = &ExecInput{f: pw, stdin: true}
	}
	return w, nil
}

// closeChild closes podvisor's copies of the child's ends: only the child
// may hold them, or EOF never comes (and a terminal never reads EIO).
func (w *execStdio) closeChild() {
	for _, f := range []*os.File{w.in, w.out, w.errw} {
		if f != nil {
			f.Close() // the terminal's slave thrice: the later ones fail harmlessly
		}
	}
}

// closeOurs closes podvisor's ends (the read ends end their copies).
func (w *execStdio) closeOurs() {
	for _, f := range []*os.File{w.outR, w.errR} {
		if f != nil {
			f.Close()
		}
	}
	if w.input != nil && w.input.f != nil && !w.input.tty {
		w.input.f.Close()
	}
}

// Exec runs argv in p's context (execSpec) with the streams sio asks for,
// copying its output to sio's writers. It returns the command's exit code
// (128+N for a death by signal N) once it exited; the members of its group
// still alive then are killed. When ctx ends first (the client went away),
// the group gets SIGKILL. An error means it did not start: a
// *proc.SpawnError (code 127 or 126) or a pipe, terminal or cgroup that
// could not be made (code 1).
func (l *Launcher) Exec(ctx context.Context, p *config.Process, argv []string, sio ExecIO) (int, error) {
	spec := l.execSpec(p, argv)
	w, err := openExecStdio(sio, cred(p))
	if err != nil {
		return 1, err
	}
	defer w.closeOurs()
	spec.Stdin, spec.Stdout, spec.Stderr, spec.Terminal = w.in, w.out, w.errw, sio.TTY
	if sio.TTY {
		spec.Env = withTERM(spec.Env)
	}
	release := l.execCgroup(p, &spec)
	defer release()
	c, err := proc.Spawn(l.Reaper, spec)
	w.closeChild()
	shown := strings.Join(argv, " ")
	if r := envRedactor(spec.Env, p.SecretEnv); r != nil {
		shown = r.Replace(shown) // podvisor's own log shows no secret
	}
	if err != nil {
		var se *proc.SpawnError
		if errors.As(err, &se) {
			return se.Code(), err
		}
		return 126, err
	}
	l.logger().Info("exec", "process", p.Name, "command", shown, "pid", c.Pid(), "tty", sio.TTY, "stdin", sio.Stdin)
	var copies sync.WaitGroup
	copyOut := func(dst io.Writer, src *os.File) {
		copies.Add(1)
		go func() {
			defer copies.Done()
			// A terminal's master reads EIO once every holder of the
			// slave closed it: the end of its output.
			_, _ = io.Copy(dst, src)
		}()
	}
	// Started first: its pid reaches the client before any output.
	if sio.Started != nil {
		sio.Started(c.Pid(), w.input)
	}
	copyOut(sio.Stdout, w.outR)
	if w.errR != nil {
		copyOut(sio.Stderr, w.errR)
	}

	var ex proc.Exit
	select {
	case ex = <-c.Done():
	case <-ctx.Done():
		_ = c.Signal(syscall.SIGKILL)
		ex = <-c.Done()
	}
	_ = c.Signal(syscall.SIGKILL) // background members of its group do not outlive it
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	t := time.NewTimer(execOutputGrace)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		w.closeOurs() // interrupts the pending reads
		<-drained
	}
	l.logger().Info("exec ended", "process", p.Name, "pid", c.Pid(), "code", ex.Code())
	return ex.Code(), nil
}

// execCgroup puts in spec the cgroup a command exec'd in p's context
// starts in, when p has resources: the running incarnation's own, so
// that the command shares its limits and counts against them (as
// kubectl exec's does against its container's); when p is not running,
// a cgroup of the command's own with p's limits, which release kills and
// removes. Where podvisor cannot make cgroups the command runs without
// one, as p does (said when the hierarchy was opened).
func (l *Launcher) execCgroup(p *config.Process, spec *proc.Spec) (release func()) {
	c := l.Cgroups
	if c == nil || p.Resources == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.groups[p.Name]; g != nil {
		spec.Cgroup = g
		return func() {}
	}
	c.open()
	if c.h == nil {
		return func() {}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	// '@' is not allowed in a process name: never an incarnation's name.
	g, err := c.h.New(p.Name+"@exec-"+hex.EncodeToString(suffix[:]), limits(p.Resources))
	if err != nil {
		l.logger().Warn("exec runs without the process's resources", "process", p.Name, "why", err)
		return func() {}
	}
	spec.Cgroup = g
	own := c.own
	return func() {
		_, _ = g.Kill()
		own.remove(g) // retried while busy; killed and removed at Close
	}
}
