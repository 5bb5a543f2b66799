// The operate verbs as the loop carries them out: signal, stop (with what
// depends on the process), start (with what it depends on), restart (with its
// restart: true dependents), and how an exit ends an operator's stop.

package supervisor

import (
	"fmt"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

func (s *Supervisor) opSignal(w *waiter, r *record, name string) {
	sig, err := proc.ParseSignal(name)
	switch {
	case err != nil:
		w.resp.Error = err.Error()
	case r.cur.child == nil:
		// An item, not a bare result: settleWaiters derives OK from the
		// items, so "not running" makes the command fail (exit 1).
		w.done(r, false, "not running ("+r.state.String()+"): no signal sent")
	default:
		sigName := proc.SignalName(sig)
		if err := r.cur.child.Signal(sig); err != nil {
			w.done(r, false, "signal failed: "+err.Error())
			return
		}
		s.log.Info("signal sent by podvisor signal", "process", r.p.Name, "signal", sigName, "pid", r.cur.pid)
		w.done(r, true, fmt.Sprintf("sent %s to process group %d", sigName, r.cur.pid))
	}
}

// dependentsClosure returns r's dependents, transitively, in s.recs order.
func (s *Supervisor) dependentsClosure(r *record) []*record {
	in := map[*record]bool{}
	var walk func(*record)
	walk = func(x *record) {
		for _, d := range x.dependents {
			dr := s.recs[d]
			if !in[dr] && !dr.op.gone {
				in[dr] = true
				walk(dr)
			}
		}
	}
	walk(r)
	out := make([]*record, 0, len(in))
	for _, x := range s.recs {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// opStop stops each named process and, first, everything that depends on
// it; they stay stopped (no policy restart, no dependency start) until
// podvisor start.
func (s *Supervisor) opStop(w *waiter, rs []*record, now time.Time) {
	for _, r := range rs {
		switch {
		case r.op.held:
			w.done(r, true, "already stopped ("+reasonHeld+")")
			continue
		case r.state == Completed:
			w.done(r, false, "has completed: nothing to stop (its dependents keep running)")
			continue
		case r.state == Failed:
			w.done(r, false, "has failed: nothing to stop")
			continue
		}
		s.hold(w, r, r.p.Name, "stopped")
		for _, d := range s.dependentsClosure(r) {
			if !d.op.held && d.state != Completed && d.state != Failed {
				s.hold(w, d, r.p.Name, "stopped with "+r.p.Name)
			}
		}
	}
	s.stepWantedStops(now)
}

// hold marks r operator-stopped and starts (or arranges) its stop.
func (s *Supervisor) hold(w *waiter, r *record, by, verb string) {
	r.op.held, r.op.heldBy = true, by
	r.relaunch = false
	s.log.Info("stopping: podvisor stop", "process", r.p.Name, "by", by)
	switch {
	case r.state == Stopping:
		// Being stopped already (a restart, a failed check): that stop
		// finishes as it began, and operatorExit keeps it down.
	case r.cur.child != nil:
		r.wantStop = intentHold // stepWantedStops waits for its dependents
	default:
		s.setState(r, Stopped)
		r.reason = reasonHeld
	}
	w.items = append(w.items, &waitItem{r: r, goal: goalStopped, gen: r.cur.gen, pid: r.cur.pid, verb: verb})
}

// opStart starts each named operator-stopped (or policy-stopped) process and
// what its stop took down with it. A start whose dependency is stopped by
// the operator is refused, naming it: starting it would otherwise wait
// forever (or silently start more than was asked).
func (s *Supervisor) opStart(w *waiter, rs []*record, now time.Time) {
	set := map[*record]string{} // records to start -> their verb
	var order []*record
	for _, r := range rs {
		switch {
		case r.state == Completed:
			w.done(r, false, "has completed; oneshots and jobs run once (podvisor restart runs it again)")
			continue
		case !r.op.held && r.state != Stopped && r.state != Failed:
			w.done(r, true, "already "+r.state.String()+pidText(r.cur.pid))
			continue
		}
		set[r] = "started"
		order = append(order, r)
		for _, d := range s.outsideDeps(r) {
			if _, ok := set[d]; !ok {
				set[d] = "started for " + r.p.Name + " (outside this run's set)"
				order = append(order, d)
			}
		}
		for _, x := range s.recs {
			if x.op.held && x.op.heldBy == r.p.Name && x != r {
				if _, ok := set[x]; !ok {
					set[x] = "started with " + r.p.Name
					order = append(order, x)
				}
			}
		}
	}
	for _, r := range order {
		if why := s.blockedBy(r, set); why != "" {
			w.done(r, false, "not started: "+why)
			delete(set, r)
		}
	}
	for _, r := range order {
		verb, ok := set[r]
		if !ok {
			continue
		}
		r.op.held, r.op.heldBy, r.op.outside = false, "", false
		s.log.Info("starting: podvisor start", "process", r.p.Name)
		switch {
		case r.cur.child != nil && r.state == Stopping:
			// Its stop is under way (a stop.command, a slow exit): it
			// comes back once the old incarnation is gone.
			r.cur.intent = intentRestart
		case r.cur.child != nil:
			// Still waiting for its dependents to stop: it just stays.
			r.wantStop = intentNone
			w.done(r, true, "kept running (its stop had not begun)"+pidText(r.cur.pid))
			continue
		default:
			s.setState(r, Pending)
			r.reason = ""
		}
		w.items = append(w.items, &waitItem{r: r, goal: goalUp, gen: r.cur.gen, verb: verb})
	}
	_ = now
}

// blockedBy says which dependency of r stays down whatever happens (stopped
// by the operator, or stopped or failed for good) and is not being started
// along, or "".
func (s *Supervisor) blockedBy(r *record, starting map[*record]string) string {
	for _, d := range r.deps {
		dr := s.recs[d.idx]
		if _, ok := starting[dr]; ok {
			continue
		}
		switch {
		case dr.op.held:
			return fmt.Sprintf("dependency %s is stopped (%s); start it first: podvisor start %s", dr.p.Name, reasonHeld, dr.p.Name)
		case dr.state == Failed || dr.state == Stopped && dr.cur.child == nil:
			return fmt.Sprintf("dependency %s is %s (%s) and will not start by itself; start it first: podvisor start %s", dr.p.Name, dr.state, dr.reason, dr.p.Name)
		}
	}
	return ""
}

// opRestart stops each named process (its restart: true dependents first)
// and starts it again once its dependencies hold, then those dependents.
func (s *Supervisor) opRestart(w *waiter, rs []*record, now time.Time) {
	for _, r := range rs {
		if r.op.held || r.state == Stopped || r.state == Failed {
			// Nothing runs: restart means start (as systemctl does).
			s.opStart(w, []*record{r}, now)
			continue
		}
		item := &waitItem{r: r, goal: goalUp, gen: r.cur.gen, pid: r.cur.pid, verb: "restarted"}
		w.items = append(w.items, item)
		for _, d := range s.restartClosure(r) {
			if d.cur.child != nil {
				w.items = append(w.items, &waitItem{r: d, goal: goalUp, gen: d.cur.gen, pid: d.cur.pid, verb: "restarted with " + r.p.Name})
			}
		}
		s.log.Info("restarting: podvisor restart", "process", r.p.Name)
		switch r.state {
		case Backoff:
			r.backoff.until = now // skip what is left of the backoff
		case Completed:
			s.setState(r, Pending) // a oneshot runs again
			r.relaunch = true
			s.requestStop(r, intentCascade, now)
		case Starting, Running:
			if s.canOverlap(r) {
				s.beginOverlap(r, "restarting: podvisor restart", now)
				break
			}
			s.requestStop(r, intentRestart, now)
		}
		// Pending: it starts when its dependencies hold; Stopping: it is
		// on its way down and starts again by its intent or policy.
	}
}

// restartClosure returns the processes that declared restart: true on r,
// transitively.
func (s *Supervisor) restartClosure(r *record) []*record {
	var out []*record
	seen := map[*record]bool{}
	var walk func(*record)
	walk = func(x *record) {
		for _, d := range x.restartDeps {
			dr := s.recs[d]
			if !seen[dr] && !dr.op.gone {
				seen[dr] = true
				out = append(out, dr)
				walk(dr)
			}
		}
	}
	walk(r)
	return out
}

// operatorExit finishes the exit of a process stopped by a command. It
// reports whether it did.
func (s *Supervisor) operatorExit(r *record, intent stopIntent, code int) bool {
	switch {
	case r.op.gone:
		intent, r.wantStop = intentRemove, intentNone // whatever ended it, it does not come back
	case r.op.held && intent == intentNone && r.p.Type != config.Service && r.p.IsSuccess(code):
		// A oneshot or job that finished before its stop began (it was
		// waiting for its dependents to stop): it completed.
		r.op.held, r.op.heldBy, r.wantStop = false, "", intentNone
		return false
	case r.op.held:
		intent, r.wantStop = intentHold, intentNone // exited by itself while its stop waited: it stays down
	}
	switch intent {
	case intentHold:
		s.setState(r, Stopped)
		r.reason = reasonHeld
		s.log.Info("stopped by podvisor stop", "process", r.p.Name, "code", code)
	case intentRemove:
		s.setState(r, Stopped)
		r.reason = "removed from the config"
		s.log.Info("stopped: removed from the config", "process", r.p.Name, "code", code)
	case intentRestart, intentRestartTree:
		s.setState(r, Pending)
		r.reason, r.relaunch = "restarting: podvisor restart", true
		s.log.Info("stopped for restart", "process", r.p.Name, "code", code)
	default:
		return false
	}
	return true
}
