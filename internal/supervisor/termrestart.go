// KEP-4438 in a teardown: a sidecar with restart.during_termination that
// exits on its own while a process that is no sidecar still runs is
// restarted (with its backoff), so the app can drain through it; once
// no regular process runs, it stops in its turn like the other sidecars
// (docs/kubernetes.md, "Sidecars while a regular container stops").

package supervisor

import (
	"fmt"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// restartsInTeardown reports whether r restarts when it exits in the
// teardown now: a sidecar with restart.during_termination and a restart
// policy, before shutdown_timeout, while a regular process is alive.
func (s *Supervisor) restartsInTeardown(r *record) bool {
	if !r.p.Sidecar || !r.p.Restart.DuringTermination || r.p.Restart.Policy == config.Never || s.pastDeadline || s.killingAll {
		return false
	}
	for _, o := range s.recs {
		if !o.p.Sidecar && o.cur.child != nil {
			return true
		}
	}
	return false
}

// teardownExit handles r's exit in the teardown when r exited on its own
// (not stopped by podvisor) and restartsInTeardown: its restart after its
// backoff, which stepTeardown starts. false: the exit ends r as usual.
func (s *Supervisor) teardownExit(r *record, code int, ran time.Duration, now time.Time) bool {
	if r.state == Stopping || !s.restartsInTeardown(r) {
		return false
	}
	if r.p.Restart.Policy == config.OnFailure && r.p.IsSuccess(code) {
		return false
	}
	r.reason = fmt.Sprintf("exited with code %d", code)
	r.backoff.delay = nextBackoff(r.backoff.delay, r.p.Restart.Backoff, r.p.Restart.MaxBackoff, ran, config.BackoffResetAfter)
	s.setState(r, Backoff)
	r.backoff.until = now.Add(r.backoff.delay)
	s.log.Info("restarting during the teardown (restart.during_termination)", "process", r.p.Name, "code", code, "in", r.backoff.delay.String())
	return true
}

// depsHoldInTeardown: a restart in the teardown waits, as any start, until
// r's dependencies hold (one that is itself stopping holds it back); their
// changes, not the clock, wake it then (backoffEnd).
func (s *Supervisor) depsHoldInTeardown(r *record) bool {
	for _, d := range r.deps {
		if !s.holds(s.recs[d.idx], d.cond) {
			return false
		}
	}
	return true
}

// stepTeardownRestart starts r, in Backoff in the teardown, once its
// backoff ended and its dependencies hold; true while r is to stay in Backoff or
// was started, false when it is to stop (no regular process left, or past
// the deadline).
func (s *Supervisor) stepTeardownRestart(r *record, now time.Time) bool {
	if !s.restartsInTeardown(r) {
		return false
	}
	if reached(s.backoffEnd(r), now) {
		r.count.restarts++
		s.startAll([]*record{r}, now)
	}
	return true
}
