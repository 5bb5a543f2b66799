// The kubelet's pace (kube play sets Options.Pace). On a node the kubelet
// learns that a container started or exited from its pod lifecycle event
// generator, which relists the runtime once a second; the pod worker acts on
// the change at the sync that follows that relist (it waits for a pod status
// newer than its last sync). So a node starts the next init container, native
// sidecar or regular container some time between 0 and 1 s after the previous
// one started or exited, restarts a container at the first relist after its
// exit, and ends a pod whose regular containers have all exited at the first
// relist after the last exit. docs/kubernetes.md ("The kubelet's pace") gives
// the sources.
//
// The relist is a per-pod clock: ticks at first, first+period, ... A change
// at t is noticed at the first tick strictly after t (the relist that starts
// after the sync that made the change). Everything here is a pure function of
// times, so the timing is tested without a clock.

package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/graph"
)

// Pace is the kubelet's pace for a run.
type Pace struct {
	// Period is the relist period (the kubelet's generic PLEG: 1s); 0
	// turns pacing off.
	Period time.Duration
	// Phase is when the first relist comes after the run starts, in (0,
	// Period]; 0 or more than Period is Period. On a node the relist runs on
	// its own schedule, so its phase against a pod's start is anywhere in
	// the period (kube play draws it).
	Phase time.Duration
	// Noticed names the processes whose start and exit the kubelet learns
	// at a relist: the containers, and the postStart hooks of init
	// containers (the sync that runs the hook ends with it; the next
	// container waits for a relist after that). A postStart hook of a
	// regular container is not in it: the containers after it start in the
	// same sync, once it returns.
	Noticed []string
}

// relist is the tick schedule of one run: first, first+period, ...
type relist struct {
	first  time.Time
	period time.Duration
}

// newRelist is the schedule of p for a run that started at origin; the
// zero relist (no period) notices everything at once.
func newRelist(p Pace, origin time.Time) relist {
	if p.Period <= 0 {
		return relist{}
	}
	phase := p.Phase
	if phase <= 0 || phase > p.Period {
		phase = p.Period
	}
	return relist{first: origin.Add(phase), period: p.Period}
}

// on reports whether the schedule paces anything.
func (c relist) on() bool { return c.period > 0 }

// after is the first tick strictly after t: when a change at t is noticed.
// Off, it is t itself.
func (c relist) after(t time.Time) time.Time {
	if !c.on() {
		return t
	}
	if t.Before(c.first) {
		return c.first
	}
	n := t.Sub(c.first)/c.period + 1
	return c.first.Add(n * c.period)
}

// noticedAt is when a dependent may act on dependency r's condition c,
// which holds now: the tick after the change that made it hold. For a
// ready dependency (a startupProbe that gates), the probe's result reaches
// the pod worker at once, but its sync still waits for a relist newer than
// its last sync, the one that saw the start: not before the second tick
// after the start.
func (c relist) noticedAt(r *record, cond graph.Condition) time.Time {
	if r.state == Completed {
		return c.after(r.exitedAt)
	}
	switch cond {
	case graph.Started:
		return c.after(r.cur.startedAt)
	case graph.Ready:
		return later(r.cur.readyAt, c.after(c.after(r.cur.startedAt)))
	}
	return time.Time{}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// paced reports whether dependents learn r's changes at a relist.
func (s *Supervisor) paced(r *record) bool {
	return s.relist.on() && s.noticed[r.p.Name]
}

// paceDue is, for a dependency d that holds, when the dependent may act on
// it (zero: at once).
func (s *Supervisor) paceDue(d dep) time.Time {
	dr := s.recs[d.idx]
	if !s.paced(dr) {
		return time.Time{}
	}
	return s.relist.noticedAt(dr, d.cond)
}

// paceWake is the earliest relist tick a pending record waits for: a
// dependency holds but has not been noticed yet (zero: none).
func (s *Supervisor) paceWake(r *record, now time.Time) time.Time {
	if !s.relist.on() || r.state != Pending {
		return time.Time{}
	}
	var w time.Time
	for _, d := range r.deps {
		if due := s.paceDue(d); s.holds(s.recs[d.idx], d.cond) && due.After(now) {
			w = earliest(w, due)
		}
	}
	return w
}

// exitNoticed is when the kubelet acts on r's last exit, restarting it or
// ending the pod: the relist after it (zero: not paced).
func (s *Supervisor) exitNoticed(r *record) time.Time {
	if !s.paced(r) || r.exitedAt.IsZero() {
		return time.Time{}
	}
	return s.relist.after(r.exitedAt)
}

// stepJobsDone ends the run whose jobs all completed once the relist after
// the last exit has come (jobsDoneAt, set by onExit when paced).
func (s *Supervisor) stepJobsDone(now time.Time) {
	if s.jobsDoneAt.IsZero() || !reached(s.jobsDoneAt, now) {
		return
	}
	s.jobsDoneAt = time.Time{}
	if s.allJobsDone() {
		s.teardown(Outcome{Reason: ReasonJobsDone, Detail: "all jobs completed"}, now)
	}
}
