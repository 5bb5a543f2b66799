// Stops outside teardown (a failed start or liveness check, a restart: true
// cascade, an operator's stop): dependents first, then the stop signal, the
// stop.command with its share of the budget, and SIGKILL at the timeout.

package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// requestStop asks for r to be stopped outside teardown, and with it, first,
// every process that depends on it through restart: true, transitively
// (a <- b <- c stops c, then b, then a: never a process while a dependent
// that asked to follow it runs). Dependents without a child (in backoff,
// stopped) wait as pending for their dependency instead.
func (s *Supervisor) requestStop(r *record, intent stopIntent, now time.Time) {
	s.markStop(r, intent)
	s.stepWantedStops(now)
}

func (s *Supervisor) markStop(r *record, intent stopIntent) {
	if r.cur.child != nil && r.state != Stopping && r.wantStop == intentNone {
		r.wantStop = intent
	}
	for _, d := range r.restartDeps {
		dr := s.recs[d]
		switch {
		case dr.cur.child != nil && dr.state != Stopping && dr.wantStop == intentNone:
			s.log.Info("stopping dependent before its dependency restarts", "process", dr.p.Name, "dependency", r.p.Name)
			s.markStop(dr, intentCascade)
		case dr.cur.child == nil && !dr.op.held && !dr.op.gone && (dr.state == Backoff || dr.state == Stopped):
			dr.relaunch = dr.relaunch || dr.state == Backoff
			s.setState(dr, Pending)
			s.markStop(dr, intentCascade) // its own dependents
		}
		// A dependent already stopping finishes its stop; it restarts
		// only once this dependency holds again.
	}
}

// stepWantedStops begins the stops requested by requestStop whose restart:
// true dependents are all gone. Dependents come later in s.recs, so one
// reverse pass starts every stop that can start now.
func (s *Supervisor) stepWantedStops(now time.Time) {
	for i := len(s.recs) - 1; i >= 0; i-- {
		r := s.recs[i]
		if r.wantStop == intentNone {
			continue
		}
		if r.cur.child == nil || r.state == Stopping {
			r.wantStop = intentNone
			continue
		}
		if s.restartDependentsAlive(r) || (r.wantStop == intentHold || r.wantStop == intentRemove || r.wantStop == intentRestartTree) && s.dependentsAlive(r) {
			continue // podvisor stop, removal and a cascade restart take every dependent down first
		}
		intent := r.wantStop
		r.wantStop = intentNone
		s.beginStop(r, intent, now)
	}
}

// escalate sends SIGKILL once a stopping child has outlived its stop budget.
func (s *Supervisor) escalate(r *record, now time.Time) {
	if !reached(stopDeadline(r), now) {
		return
	}
	if s.phase == PhaseStopping && r.p.Stop.MinGrace > 0 && r.cur.signalledAt.IsZero() {
		// Its command used the budget up: the signal, then min_grace.
		s.lastStop(r, now)
		return
	}
	why := "stop timeout " + r.p.Stop.Timeout.String() + " exceeded"
	if s.phase == PhaseStopping && !r.cur.due.Before(s.deadline) {
		// beginStop clipped the stop budget to the global one: say which.
		why = "shutdown_timeout " + s.cfg.ShutdownTimeout.String() + " reached"
	}
	s.kill(r, why)
}

func (s *Supervisor) beginStop(r *record, intent stopIntent, now time.Time) {
	s.setState(r, Stopping)
	r.cur.intent = intent
	s.tl.StopRequested(r.p.Name, r.cur.gen, s.stopWhy(r, intent), now)
	r.cur.due = s.stopDue(r, now)
	if f := r.cur.failedBy; intent == intentFail && f != nil && f.StopTimeout > 0 {
		// The check's own budget (a probe's terminationGracePeriodSeconds).
		r.cur.due = now.Add(f.StopTimeout)
	}
	s.stopProbes(r, true)
	if r.cur.hookEarly {
		// Its stop.command began with the teardown (sidecars.go): the
		// signal follows it, within the budget counted from then.
		r.cur.due = s.stopDue(r, s.deadline.Add(-s.cfg.ShutdownTimeout))
		if !r.cur.stopCmd {
			s.sendStopSignal(r)
		}
		return
	}
	if len(r.p.Stop.Command) > 0 {
		// The hook runs inside the stop budget, less a grace for the stop
		// signal: a hanging hook must not mean the signal is never sent
		// (Kubernetes sends TERM when a preStop hook overruns, too). With
		// stop.min_grace the hook has the whole budget, and the signal
		// min_grace after it.
		hookBy := r.cur.due
		if r.p.Stop.MinGrace == 0 || s.phase != PhaseStopping {
			hookBy = r.cur.due.Add(-hookGrace(r.cur.due.Sub(now)))
		}
		s.runHook(r, hookBy, now)
		return
	}
	s.sendStopSignal(r)
}

// hookGrace is the part of a stop budget kept for the stop signal after a
// stop.command: a quarter of it, at most 2 s.
func hookGrace(budget time.Duration) time.Duration {
	return min(budget/4, 2*time.Second)
}

func (s *Supervisor) sendStopSignal(r *record) {
	if r.cur.child == nil {
		return
	}
	if err := r.cur.child.Signal(r.p.Stop.Signal); err != nil {
		s.log.Warn("stop signal", "process", r.p.Name, "err", err)
	}
	at := time.Now()
	s.tl.Signalled(r.p.Name, r.cur.gen, r.p.Stop.Signal, at)
	if g := r.p.Stop.MinGrace; g > 0 && s.phase == PhaseStopping && r.cur.due.Before(at.Add(g)) {
		r.cur.due = at.Add(g) // the kubelet's minimum, even past shutdown_timeout
	}
	r.cur.signalledAt = at
	// A stopped (SIGSTOP) process would ignore the stop signal until SIGKILL.
	if r.p.Stop.Signal != proc.SIGCONT {
		_ = r.cur.child.Signal(proc.SIGCONT)
	}
}
