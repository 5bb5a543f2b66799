// Restarts with overlap (restart: {overlap: true}): the new incarnation is
// started while the old one still serves, and the old one is stopped once
// the new one is ready. For servers that share their port with
// SO_REUSEPORT, or take it from podvisor (sockets:), so that a restart
// refuses nothing even without a backlog to hold connections.

package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// canOverlap reports whether a restart of r may overlap: a running service
// asking for it, with no restart: true dependent alive (those stop before
// their dependency restarts, which an overlap never does), nothing else
// under way, and outside teardown.
func (s *Supervisor) canOverlap(r *record) bool {
	return r.p.Restart.Overlap && r.p.Type == config.Service && r.state == Running && r.cur.child != nil &&
		r.old == nil && r.wantStop == intentNone && r.cur.lingering == nil && !r.op.held && !r.op.gone &&
		s.phase != PhaseStopping && !s.restartDependentsAlive(r)
}

// beginOverlap keeps r's incarnation aside as the outgoing one and makes r
// pending, so the step starts the new incarnation at once (Running ->
// Pending in the transition table).
func (s *Supervisor) beginOverlap(r *record, why string, now time.Time) {
	s.stopProbes(r, false)
	// The old incarnation counts in s.alive until its exit, which
	// incarnationOf routes to it by its gen. r has none of its own until
	// the next spawn.
	r.old, r.cur = r.cur, &incarnation{gen: r.cur.gen}
	s.setState(r, Pending)
	r.relaunch = true
	r.reason = why
	s.log.Info("restarting with overlap: the old incarnation serves until the new one is ready", "process", r.p.Name, "pid", r.old.pid)
	_ = now
}

// stepOverlaps stops an outgoing incarnation once the new one is ready, or
// has ended without becoming ready, or the teardown began; and SIGKILLs it
// at its stop timeout.
func (s *Supervisor) stepOverlaps(now time.Time) {
	for _, r := range s.recs {
		o := r.old
		if o == nil {
			continue
		}
		if !o.signalledAt.IsZero() {
			// A stop begun before the teardown ends at its deadline too
			// (else the loop would wake for the deadline and find nothing
			// to do: a spin).
			if s.phase == PhaseStopping && s.deadline.Before(o.due) {
				o.due = s.deadline
			}
			if reached(s.oldStopDeadline(r), now) {
				s.killOld(r, "stop timeout "+r.p.Stop.Timeout.String()+" exceeded")
			}
			continue
		}
		if r.state == Pending || r.state == Starting {
			if s.phase != PhaseStopping {
				continue // the new one is on its way: the old one serves
			}
		}
		o.signalledAt = now
		o.due = now.Add(r.p.Stop.Timeout)
		if s.phase == PhaseStopping && o.due.After(s.deadline) {
			o.due = s.deadline
		}
		s.log.Info("stopping the old incarnation", "process", r.p.Name, "pid", o.pid, "new", r.state.String())
		if err := o.child.Signal(r.p.Stop.Signal); err != nil {
			s.log.Warn("stop signal", "process", r.p.Name, "pid", o.pid, "err", err)
		}
		s.tl.Signalled(r.p.Name, o.gen, r.p.Stop.Signal, now)
		if r.p.Stop.Signal != proc.SIGCONT {
			_ = o.child.Signal(proc.SIGCONT)
		}
	}
}

// killOld SIGKILLs r's outgoing incarnation, if any.
func (s *Supervisor) killOld(r *record, why string) {
	o := r.old
	if o == nil || o.killed {
		return
	}
	o.killed = true
	if s.phase == PhaseStopping {
		s.outcome.Killed = true
	}
	s.log.Warn("killing the old incarnation", "process", r.p.Name, "pid", o.pid, "reason", why)
	_ = o.child.Signal(proc.SIGKILL)
	s.tl.Signalled(r.p.Name, o.gen, proc.SIGKILL, time.Now())
}

// oldExited handles the exit of r's outgoing incarnation o.
func (s *Supervisor) oldExited(r *record, o *incarnation, e exitedEv) {
	r.old = nil
	s.alive--
	code := e.exit.Code()
	s.recordExit(r, o.gen, code, false, "", e.exit.At)
	s.log.Info("old incarnation exited", "process", r.p.Name, "pid", o.pid, "code", code)
}
