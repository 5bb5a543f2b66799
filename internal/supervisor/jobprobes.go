// Start-up and readiness checks of oneshots and jobs (kube play's
// startupProbe and readinessProbe on the regular containers of a pod that
// runs to completion).
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

// startupCheck is the check that gates a oneshot's or job's start-up, nil
// when it has none.
func startupCheck(p *config.Process) *config.Probe {
	if p.Type == config.Service {
		return nil
	}
	if p.Startup != nil {
		return p.Startup
	}
	return p.Ready
}

// readinessChecked reports whether r is a oneshot or job whose `ready`
// check is readiness (it has a `startup` check of its own).
func readinessChecked(r *record) bool {
	return r.p.Type != config.Service && r.p.Startup != nil && r.p.Ready != nil
}

// awaitsStartup reports whether r's start timeout is running.
func (s *Supervisor) awaitsStartup(r *record) bool {
	return startupChecked(r) && r.state == Running && !r.startedUp && r.p.StartTimeout > 0 &&
		r.child != nil && r.wantStop == intentNone && s.phase != PhaseStopping
}

// stepStartup stops a oneshot or job that missed its start timeout.
func (s *Supervisor) stepStartup(r *record, now time.Time) {
	if !s.awaitsStartup(r) || now.Before(r.due) {
		return
	}
	s.log.Warn("start timeout", "process", r.p.Name, "start_timeout", r.p.StartTimeout.String(), "last", r.readyDetail)
	r.reason = "start timeout " + r.p.StartTimeout.String() + " exceeded"
	r.failedBy = startupCheck(r.p)
	s.requestStop(r, intentFail, now)
}

// startupFailed stops a oneshot or job whose startup check failed
// failure_threshold times in a row, as the kubelet kills a container whose
// startupProbe failed.
func (s *Supervisor) startupFailed(r *record, detail string, now time.Time) {
	if r.p.Startup == nil || r.startedUp || r.child == nil || r.state != Running ||
		r.wantStop != intentNone || s.phase == PhaseStopping {
		return
	}
	n := r.p.Startup.FailureThreshold
	s.log.Warn("startup check failed", "process", r.p.Name, "failures", n, "detail", detail)
	r.reason = "startup check failed " + strconv.Itoa(n) + " times: " + detail
	r.failedBy = r.p.Startup
	s.requestStop(r, intentFail, now)
}

// onStartedUp records that a oneshot's or job's startup check passed and
// begins its readiness (with `startup`) and liveness checks.
func (s *Supervisor) onStartedUp(r *record, now time.Time) {
	if r.startedUp || r.child == nil || r.state != Running {
		return
	}
	r.startedUp, r.readyAt, r.due = true, now, time.Time{}
	if r.p.Startup == nil {
		r.ready = true // its ready check is the startup check
	}
	s.tl.Ready(r.p.Name, r.gen, now)
	s.log.Info("started up", "process", r.p.Name, "after", now.Sub(r.startedAt).Round(time.Millisecond).String())
	if s.phase == PhaseStopping || r.wantStop != intentNone {
		return
	}
	if r.p.Startup != nil {
		// The startup check is done (the kubelet stops probing it too).
		if r.cancelProbe != nil {
			r.cancelProbe()
			r.cancelProbe = nil
		}
		if r.p.Ready != nil && isPolled(r.p.Ready.Kind) {
			s.watchReady(r, now)
		}
	}
	if r.p.Live != nil {
		s.watch(s.incarnationCtx(r), r, r.p.Live, "live", now)
	}
}

// onJobReadiness records a readiness result of a oneshot or job with a
// startup check; it never stops the process.
func (s *Supervisor) onJobReadiness(r *record, ready bool, detail string) {
	if ready == r.ready {
		return
	}
	r.ready = ready
	if ready {
		s.log.Info("ready", "process", r.p.Name)
	} else {
		s.log.Warn("not ready", "process", r.p.Name, "detail", detail)
	}
}

// incarnationCtx returns a context for one more check of r's incarnation,
// cancelled with the others by r.cancelProbe.
func (s *Supervisor) incarnationCtx(r *record) context.Context {
	var ctx context.Context
	if r.cancelProbe == nil {
		ctx, r.cancelProbe = context.WithCancel(s.probeCtx)
	} else {
		// One cancel must stop every check of the incarnation.
		ctx, r.cancelProbe = chainCancel(s.probeCtx, r.cancelProbe)
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
