package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/launch"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// ending is the run's end for podvisor down: closed once finish knows the
// exit code and the shutdown report.
type ending struct {
	sigs  chan<- os.Signal
	ended chan struct{}
	end   control.DownResponse // written before ended is closed
}

var _ control.Downer = (*ending)(nil)

// Down begins the teardown as a SIGTERM does: it is one, on the channel
// the supervisor reads signals from.
func (e *ending) Down() {
	select {
	case e.sigs <- syscall.SIGTERM:
	default: // the channel is full of signals already: a teardown is coming
	}
}

func (e *ending) Ended() <-chan struct{}         { return e.ended }
func (e *ending) End() control.DownResponse      { return e.end }
func (e *ending) finish(code int, detail string) { e.end.ExitCode, e.end.Cause = code, detail }

// execBackend runs podvisor exec's commands with the launcher, in the
// context of the process as the config in effect describes it.
type execBackend struct {
	run *run
}

func (b execBackend) Exec(ctx context.Context, req control.ExecRequest, stdout, stderr io.Writer, started func(int, control.ExecInput)) (int, error) {
	cfg := b.run.current.Load()
	p := cfg.Processes[req.Name]
	if p == nil {
		return 1, fmt.Errorf("no process named %q in %s", req.Name, cfg.File)
	}
	return b.run.launcher.Exec(ctx, p, req.Command, launch.ExecIO{Stdout: stdout, Stderr: stderr, Stdin: req.Stdin, TTY: req.TTY,
		Rows: req.Rows, Cols: req.Cols, Started: func(pid int, in *launch.ExecInput) { started(pid, in) }})
}

// endWith gives podvisor down its answer: the exit code, the cause and
// the shutdown report.
func (r *run) endWith(outcome supervisor.Outcome, code int) {
	r.ending.finish(code, outcome.Detail)
	r.ending.end.Shutdown = r.tl.Doc(time.Now()).Shutdown
	close(r.ending.ended)
}
