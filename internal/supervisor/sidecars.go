// The kubelet's lifecycle for processes that ask for it (kube play sets the
// options): a sidecar's start gate (seen running after its exec), stop
// commands that all start when the teardown begins (stop.command_first), and
// a stop signal with at least stop.min_grace before SIGKILL, even once
// shutdown_timeout has passed.

package supervisor

import (
	"context"
	"time"
)

// seenEv says a sidecar has been seen running after its exec.
type seenEv struct {
	idx int
	gen uint64
}

func (seenEv) isEvent() {}

// watchSeen arranges for r.seen: at once for a process that is no sidecar or
// that the launcher cannot watch (test fakes), else when the launcher has
// seen child running after its exec (seenEv).
func (s *Supervisor) watchSeen(r *record, child Child) {
	r.seen = true
	if !r.p.Sidecar {
		return
	}
	idx, gen := r.idx, r.gen
	if s.launcher.WatchSeen(s.probeCtx, child.Pid(), func() { s.send(seenEv{idx: idx, gen: gen}) }) {
		r.seen = false
	}
}

func (s *Supervisor) onSeen(e seenEv) {
	if r := s.recs[e.idx]; e.gen == r.gen {
		r.seen = true
	}
}

// startEarlyHooks starts, when the teardown begins, the stop.command of every
// live process with stop.command_first; each gets its whole stop budget. The
// stop signal waits for the process's turn and for its command.
func (s *Supervisor) startEarlyHooks(now time.Time) {
	for _, r := range s.recs {
		if r.child == nil || !r.p.Stop.CommandFirst || len(r.p.Stop.Command) == 0 {
			continue
		}
		if r.state != Starting && r.state != Running {
			continue
		}
		r.hookEarly = true
		s.runHook(r, s.stopDue(r, now), now)
	}
}

// runHook starts r's stop.command, cut off at by.
func (s *Supervisor) runHook(r *record, by, now time.Time) {
	r.stopCmd = true
	s.stopCmds++
	s.tl.StopCommand(r.p.Name, r.gen, false, nil, now)
	ctx, cancel := context.WithDeadline(s.probeCtx, by)
	r.cancelHook = cancel
	idx, gen, p := r.idx, r.gen, r.p
	go func() {
		defer cancel()
		err := s.launcher.StopCommand(ctx, p)
		s.send(stopCmdDoneEv{idx: idx, gen: gen, err: err})
	}()
}

// stopDue is when a stop that begins now must end: stop.timeout on, and in a
// teardown no later than shutdown_timeout (a command that began early counts
// from the teardown's start).
func (s *Supervisor) stopDue(r *record, now time.Time) time.Time {
	due := now.Add(r.p.Stop.Timeout)
	if s.phase == PhaseStopping && due.After(s.deadline) {
		due = s.deadline
	}
	return due
}

// lastStop is the stop of a process with stop.min_grace that shutdown_timeout
// reached before its stop signal: its command is cut off, and it gets the
// signal now and min_grace before SIGKILL.
func (s *Supervisor) lastStop(r *record, now time.Time) {
	if r.cancelHook != nil {
		r.cancelHook()
		r.cancelHook = nil
	}
	if r.stopCmd {
		r.stopCmd = false
		s.tl.StopCommand(r.p.Name, r.gen, true, context.DeadlineExceeded, now)
	}
	if r.state != Stopping {
		s.setState(r, Stopping)
		s.tl.StopRequested(r.p.Name, r.gen, "shutdown_timeout "+s.cfg.ShutdownTimeout.String()+" reached", now)
	}
	r.due = now
	s.sendStopSignal(r)
}
