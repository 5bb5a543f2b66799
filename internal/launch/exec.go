package launch

import (
	"context"
	"errors"
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

// execSpec is how `podvisor exec` runs argv in p's context: p's
// environment as Env computes it (not what belongs to one incarnation:
// NOTIFY_SOCKET, LISTEN_*, WATCHDOG_*), p's user and groups, working
// directory and oom_score_adj, stdin on /dev/null, in a process group of
// its own, killed if podvisor dies. It never has more privilege than p:
// whatever p runs with, it runs with. The process's cgroup, once podvisor
// puts processes in cgroups (docs/operate.md#exec), belongs in this Spec
// too, so that the command is bounded by the process's limits.
func (l *Launcher) execSpec(p *config.Process, argv []string, stdout, stderr *os.File) proc.Spec {
	return proc.Spec{Argv: argv, Env: l.Env(p), Dir: p.WorkingDir, Root: p.Root, Cred: cred(p), Stdout: stdout, Stderr: stderr,
		DeathSignal: syscall.SIGKILL, OOMScoreAdj: p.OOMScoreAdj}
}

// Exec runs argv in p's context (execSpec) and copies its output to stdout
// and stderr. started is called with its pid once it runs. It returns the
// command's exit code (128+N for a death by signal N) once it exited; the
// members of its group still alive then are killed. When ctx ends first
// (the client went away), the group gets SIGKILL. An error means it did not
// start: a *proc.SpawnError (code 127 or 126) or a pipe that could not be
// made (code 1).
func (l *Launcher) Exec(ctx context.Context, p *config.Process, argv []string, stdout, stderr io.Writer, started func(pid int)) (int, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return 1, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return 1, err
	}
	defer errR.Close()
	spec := l.execSpec(p, argv, outW, errW)
	c, err := proc.Spawn(l.Reaper, spec)
	outW.Close()
	errW.Close()
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
	l.logger().Info("exec", "process", p.Name, "command", shown, "pid", c.Pid())
	started(c.Pid())
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer copies.Done(); _, _ = io.Copy(stderr, errR) }()

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
		outR.Close() // interrupts the pending reads
		errR.Close()
		<-drained
	}
	l.logger().Info("exec ended", "process", p.Name, "pid", c.Pid(), "code", ex.Code())
	return ex.Code(), nil
}
