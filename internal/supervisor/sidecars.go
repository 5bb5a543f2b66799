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

// watchSeen arranges for r.seen: at once for a process that is no sidecar or
// that the launcher cannot watch (test fakes), else when the launcher has
// seen child running after its exec (seenEv).
func (s *Supervisor) watchSeen(r *record, child Child) {
	r.cur.seen = true
	if !r.p.Sidecar {
		return
	}
	idx, gen := r.idx, r.cur.gen
	if s.launcher.WatchSeen(s.probeCtx, child.Pid(), func() { s.send(seenEv{idx: idx, gen: gen}) }) {
		r.cur.seen = false
	}
}

// startEarlyHooks starts, when the teardown begins, the stop.command of every
// live process with stop.command_first; each gets its whole stop budget. The
// stop signal waits for the process's turn and for its command.
func (s *Supervisor) startEarlyHooks(now time.Time) {
	for _, r := range s.recs {
		if r.cur.child == nil || !r.p.Stop.CommandFirst || len(r.p.Stop.Command) == 0 {
			continue
		}
		if r.state != Starting && r.state != Running {
			continue
		}
		r.cur.hookEarly = true
		s.runHook(r, s.stopDue(r, now), now)
	}
}

// runHook starts r's stop.command, cut off at by.
func (s *Supervisor) runHook(r *record, by, now time.Time) {
	r.cur.stopCmd = true
	s.stopCmds++
	s.tl.StopCommand(r.p.Name, r.cur.gen, false, nil, now)
	ctx, cancel := context.WithDeadline(s.probeCtx, by)
	r.cur.cancelHook = cancel
	idx, gen, p := r.idx, r.cur.gen, r.p
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
	if r.cur.cancelHook != nil {
		r.cur.cancelHook()
		r.cur.cancelHook = nil
	}
	if r.cur.stopCmd {
		r.cur.stopCmd = false
		s.tl.StopCommand(r.p.Name, r.cur.gen, true, context.DeadlineExceeded, now)
	}
	if r.state != Stopping {
		s.setState(r, Stopping)
		s.tl.StopRequested(r.p.Name, r.cur.gen, "shutdown_timeout "+s.cfg.ShutdownTimeout.String()+" reached", now)
	}
	r.cur.due = now
	s.sendStopSignal(r)
}
