package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Detached is a process started by StartDetached.
type Detached struct {
	cmd *exec.Cmd
}

// StartDetached starts argv in a session of its own (no controlling
// terminal: a Ctrl-C or a closed terminal does not reach it), stdin on
// /dev/null, stdout and stderr on out, with extra as fds 3, 4, ... It is
// `podvisor run -d`'s background podvisor: the caller is a short-lived
// CLI with no reaper of its own, so waiting here is the one wait there is.
func StartDetached(argv, env []string, dir string, out *os.File, extra []*os.File) (*Detached, error) {
	if len(argv) == 0 {
		return nil, errors.New("start detached: empty argv")
	}
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: dir, Stdout: out, Stderr: out, ExtraFiles: extra,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Detached{cmd: cmd}, nil
}

// Pid is the process's pid.
func (d *Detached) Pid() int { return d.cmd.Process.Pid }

// Wait waits for the process's exit and returns its code (128+N for a
// death by signal N).
func (d *Detached) Wait() int {
	_ = d.cmd.Wait()
	st, ok := d.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return 1
	case st.Signaled():
		return 128 + int(st.Signal())
	}
	return st.ExitStatus()
}
