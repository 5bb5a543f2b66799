// Startup checks (`startup`, kube play's startupProbe on a regular
// container), and the checks of oneshots and jobs.
//
// A service with a `startup` check is `starting` until it passed and then
// until its `ready` check passed (without one: at once); its start_timeout
// and the check's failure_threshold apply to the startup check only, since
// readiness never stops a process.
//
// A oneshot or job with a `startup` check runs it from the spawn: `ready`
// and `live` begin once it passed, and failure_threshold consecutive
// failures of it, or a missed start_timeout, stop the process as a failed
// start. Its `ready` is then readiness only: it sets r.ready both ways and
// never stops it. Without `startup`, a oneshot's or job's `ready` check is
// its startup check (the meaning it had before `startup` existed): missing
// start_timeout stops it, `live` begins once it passed. In both cases the
// state stays `running` while it runs, and `ready` as a condition still
// means completed.

package supervisor

import (
	"context"
	"strconv"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
)

// startupChecked reports whether r is a oneshot or job with a startup
// check: its `startup`, or its `ready` when it has no `startup`.
func startupChecked(r *record) bool {
	return r.p.Type != config.Service && (r.p.Startup != nil || r.p.Ready != nil)
}

// startupCheck is the check that gates a process's start-up before its
// readiness: `startup`, or a oneshot's or job's `ready` without it; nil
// when there is none.
func startupCheck(p *config.Process) *config.Probe {
	if p.Startup != nil {
		return p.Startup
	}
	if p.Type == config.Service {
		return nil
	}
	return p.Ready
}

// awaited is the check a starting service waits for now.
func awaited(r *record) *config.Probe {
	if r.p.Startup != nil && !r.cur.startedUp {
		return r.p.Startup
	}
	return r.p.Ready
}

// startTimeoutRuns reports whether a starting service's start_timeout is
// running: until it is ready, or with a startup check until that passed.
func startTimeoutRuns(r *record) bool {
	return r.state == Starting && r.p.StartTimeout > 0 && r.wantStop == intentNone && awaited(r) != nil &&
		(r.p.Startup == nil || !r.cur.startedUp)
}

// readinessChecked reports whether r is a oneshot or job whose `ready`
// check is readiness (it has a `startup` check of its own).
func readinessChecked(r *record) bool {
	return r.p.Type != config.Service && r.p.Startup != nil && r.p.Ready != nil
}

// awaitsStartup reports whether r's start timeout is running.
func (s *Supervisor) awaitsStartup(r *record) bool {
	return startupChecked(r) && r.state == Running && !r.cur.startedUp && r.p.StartTimeout > 0 &&
		r.cur.child != nil && r.wantStop == intentNone && s.phase != PhaseStopping
}

// stepStartup stops a oneshot or job that missed its start timeout.
func (s *Supervisor) stepStartup(r *record, now time.Time) {
	if !reached(s.startupDeadline(r), now) {
		return
	}
	s.log.Warn("start timeout", "process", r.p.Name, "start_timeout", r.p.StartTimeout.String(), "last", r.cur.readyDetail)
	r.reason = "start timeout " + r.p.StartTimeout.String() + " exceeded"
	r.cur.failedBy = startupCheck(r.p)
	s.requestStop(r, intentFail, now)
}

// startupFailed stops a oneshot or job whose startup check failed
// failure_threshold times in a row, as the kubelet kills a container whose
// startupProbe failed.
func (s *Supervisor) startupFailed(r *record, detail string, now time.Time) {
	if r.p.Startup == nil || r.cur.startedUp || r.cur.child == nil || (r.state != Running && r.state != Starting) ||
		r.wantStop != intentNone || s.phase == PhaseStopping {
		return
	}
	n := r.p.Startup.FailureThreshold
	s.log.Warn("startup check failed", "process", r.p.Name, "failures", n, "detail", detail)
	r.reason = "startup check failed " + strconv.Itoa(n) + " times: " + detail
	r.cur.failedBy = r.p.Startup
	s.requestStop(r, intentFail, now)
}

// onStartedUp records that a oneshot's or job's startup check passed and
// begins its readiness (with `startup`) and liveness checks.
func (s *Supervisor) onStartedUp(r *record, now time.Time) {
	if r.p.Type == config.Service {
		s.serviceStartedUp(r, now)
		return
	}
	if r.cur.startedUp || r.cur.child == nil || r.state != Running {
		return
	}
	r.cur.startedUp, r.cur.readyAt, r.cur.due = true, now, time.Time{}
	if r.p.Startup == nil && r.p.Ready != nil {
		r.cur.ready, r.cur.readyOnce = true, true // its ready check is the startup check
	}
	s.tl.Ready(r.p.Name, r.cur.gen, now)
	s.log.Info("started up", "process", r.p.Name, "after", now.Sub(r.cur.startedAt).Round(time.Millisecond).String())
	if s.phase == PhaseStopping || r.wantStop != intentNone {
		return
	}
	if r.p.Startup != nil {
		// The startup check is done (the kubelet stops probing it too).
		if r.cur.cancelProbe != nil {
			r.cur.cancelProbe()
			r.cur.cancelProbe = nil
		}
		if r.p.Ready != nil && isPolled(r.p.Ready.Kind) {
			s.watchReady(r, now)
		}
	}
	if r.p.Live != nil {
		s.watch(s.incarnationCtx(r), r, r.p.Live, "live", now)
	}
}

// serviceStartedUp ends a starting service's startup check and begins its
// readiness: ready at once without a ready check, or with a readiness
// already reported (a log line, a notification); else once its check
// passes.
func (s *Supervisor) serviceStartedUp(r *record, now time.Time) {
	if r.cur.startedUp || r.cur.child == nil || r.state != Starting {
		return
	}
	r.cur.startedUp = true
	s.log.Info("started up", "process", r.p.Name, "after", now.Sub(r.cur.startedAt).Round(time.Millisecond).String())
	if r.cur.cancelProbe != nil {
		r.cur.cancelProbe() // the startup check; nothing else runs yet
		r.cur.cancelProbe = nil
	}
	if s.phase == PhaseStopping || r.wantStop != intentNone {
		return
	}
	switch ready := r.cur.ready; {
	case r.p.Ready == nil || ready:
		r.cur.ready = false
		s.onReady(r, true, r.cur.readyDetail, now)
	case isPolled(r.p.Ready.Kind):
		s.watchReady(r, now)
	}
}

// onJobReadiness records a readiness result of a oneshot or job with a
// startup check; it never stops the process.
func (s *Supervisor) onJobReadiness(r *record, ready bool, detail string) {
	if ready == r.cur.ready {
		return
	}
	r.cur.ready = ready
	if ready {
		r.cur.readyOnce = true
		s.log.Info("ready", "process", r.p.Name)
	} else {
		s.log.Warn("not ready", "process", r.p.Name, "detail", detail)
	}
}

// incarnationCtx returns a context for one more check of r's incarnation,
// cancelled with the others by r.cancelProbe.
func (s *Supervisor) incarnationCtx(r *record) context.Context {
	var ctx context.Context
	if r.cur.cancelProbe == nil {
		ctx, r.cur.cancelProbe = context.WithCancel(s.probeCtx)
	} else {
		// One cancel must stop every check of the incarnation.
		ctx, r.cur.cancelProbe = chainCancel(s.probeCtx, r.cur.cancelProbe)
	}
	return ctx
}

// failureCounter calls failed once the check has failed threshold times
// in a row (attempts podvisor could not run do not count).
type failureCounter struct {
	health.Checker
	threshold int
	failed    func(detail string)
	run       int  // only touched by the Watch goroutine
	done      bool // failed was called
}

func (c *failureCounter) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	switch {
	case res.Inconclusive:
	case res.OK:
		c.run = 0
	default:
		c.run++
		if c.run >= c.threshold && !c.done {
			c.done = true
			c.failed(res.Detail)
		}
	}
	return res
}
