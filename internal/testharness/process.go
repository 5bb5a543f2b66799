package testharness

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ControlOff is in the environment of every podvisor the suites start: tests
// run side by side, and two podvisors may not share the default control
// socket. A test that wants one says so in its config or environment.
const ControlOff = "PODVISOR_CONTROL=off"

// Environ is the test's environment without the variables named in drop,
// plus ControlOff, plus set (which, coming last, wins in os/exec).
func Environ(drop []string, set ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, k := range drop {
			if strings.HasPrefix(kv, k+"=") {
				keep = false
				break
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	env = append(env, ControlOff)
	return append(env, set...)
}

// ExitCode is the shell's view of an exit: 128+N for a death by signal N,
// -1 when there is no status.
func ExitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Process is a started command whose exit a goroutine waits for.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}

	mu       sync.Mutex // guards the fields below, written once at exit
	code     int
	exitedAt time.Time
	err      error
}

// Start starts cmd and waits for it in the background; see Done and Code.
func Start(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exitedAt = time.Now()
		// err is not consulted for the code: with WaitDelay it can be
		// ErrWaitDelay while ProcessState holds the real status.
		p.code, p.err = ExitCode(cmd.ProcessState), err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Pid is the pid of the started command.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited and been waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the exit and reports whether it came.
func (p *Process) Wait(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Code is the exit code (see ExitCode); -1 before the exit.
func (p *Process) Code() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exitedAt.IsZero() {
		return -1
	}
	return p.code
}

// ExitedAt is when the exit was seen; zero before it.
func (p *Process) ExitedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitedAt
}

// Err is what exec.Cmd.Wait returned; nil before the exit.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// KillTree SIGKILLs the process and every descendant it has (found before
// the first kill, so that orphans are not lost to reparenting), and waits
// up to timeout for its exit. It reports whether the exit came; a process
// that has exited already is left alone.
func (p *Process) KillTree(timeout time.Duration) bool {
	if p.Exited() {
		return true
	}
	pids := Descendants(p.Pid())
	_ = p.Cmd.Process.Kill()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return p.Wait(timeout)
}
