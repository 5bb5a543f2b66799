// Dependency queries: whether a record's dependencies hold, what it waits for,
// and whether its dependents are still alive.

package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

// depsHold reports whether r's dependencies hold at now, each noticed by
// now at the kubelet's pace (pace.go).
func (s *Supervisor) depsHold(r *record, now time.Time) bool {
	for _, d := range r.deps {
		if !s.holds(s.recs[d.idx], d.cond) {
			return false
		}
		if due := s.paceDue(d); !due.IsZero() && now.Before(due) {
			return false
		}
	}
	return true
}

func (s *Supervisor) holds(r *record, c graph.Condition) bool {
	switch c {
	case graph.Started:
		// Running now (or completed): a dependency in backoff, stopping or
		// stopped does not hold `started`, or a restart: true dependent
		// would restart at once and hold its dependency in backoff forever.
		if r.state == Completed {
			return true
		}
		return r.cur.child != nil && (r.state == Starting || r.state == Running) && r.wantStop == intentNone && r.cur.seen
	case graph.Ready:
		switch {
		case r.state == Completed:
			return completedReady(r)
		case r.p.Type == config.Job:
			return jobReadyWhileRunning(r) && r.wantStop == intentNone && r.cur.seen
		case r.p.Type != config.Service:
			return false
		}
		return r.cur.ready && r.cur.child != nil && r.state == Running && r.wantStop == intentNone && r.cur.seen
	case graph.Completed:
		return r.state == Completed
	}
	return false
}

// waitingFor lists r's unmet conditions: "db: ready", and the processes
// its reload removed that are still stopping: "web: stopped".
func (s *Supervisor) waitingFor(r *record) []string {
	var out []string
	for _, x := range r.op.after {
		if x.cur.child != nil || x.cur.lingering != nil {
			out = append(out, x.p.Name+": stopped")
		}
	}
	for _, d := range r.deps {
		dr := s.recs[d.idx]
		if !s.holds(dr, d.cond) {
			out = append(out, dr.p.Name+": "+d.cond.String())
		}
	}
	return out
}

// afterGone reports whether the processes r's reload removed are all gone
// (see record.after), forgetting them once they are.
func (s *Supervisor) afterGone(r *record) bool {
	if awaitsStops(r) {
		return false
	}
	r.op.after = nil
	return true
}

// awaitsStops reports whether a process that r's reload removed is still
// alive: r may not start yet, and its exit (not the clock) lets r go on.
func awaitsStops(r *record) bool {
	for _, x := range r.op.after {
		if x.cur.child != nil || x.cur.lingering != nil || x.old != nil {
			return true
		}
	}
	return false
}

// dependentsAlive reports whether a dependent of r runs, or runs or has
// still to run the stop.command of its completion (completion.go).
func (s *Supervisor) dependentsAlive(r *record) bool {
	for _, d := range r.dependents {
		if dr := s.recs[d]; dr.cur.child != nil || dr.cur.stopCmd || s.endHookDue(dr) {
			return true
		}
	}
	return false
}

func (s *Supervisor) restartDependentsAlive(r *record) bool {
	for _, d := range r.restartDeps {
		if s.recs[d].cur.child != nil {
			return true
		}
	}
	return false
}
