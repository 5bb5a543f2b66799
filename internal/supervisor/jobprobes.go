// Startup checks of oneshots and jobs (kube play's startupProbe on the
// regular containers of a pod that runs to completion): a oneshot or job
// with a `ready` check and a start_timeout that is not ready in time is
// stopped and counts as a failed start, like a service; its liveness check
// begins once it is ready. Its state stays `running` while it runs, and
// `ready` as a condition still means completed.

package supervisor

import (
	"context"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// startupChecked reports whether r is a oneshot or job with a ready check.
func startupChecked(r *record) bool {
	return r.p.Type != config.Service && r.p.Ready != nil
}

// awaitsStartup reports whether r's start timeout is running.
func (s *Supervisor) awaitsStartup(r *record) bool {
	return startupChecked(r) && r.state == Running && !r.ready && r.p.StartTimeout > 0 &&
		r.child != nil && r.wantStop == intentNone && s.phase != PhaseStopping
}

// stepStartup stops a oneshot or job that missed its start timeout.
func (s *Supervisor) stepStartup(r *record, now time.Time) {
	if !s.awaitsStartup(r) || now.Before(r.due) {
		return
	}
	s.log.Warn("start timeout", "process", r.p.Name, "start_timeout", r.p.StartTimeout.String(), "last", r.readyDetail)
	r.reason = "start timeout " + r.p.StartTimeout.String() + " exceeded"
	r.failedBy = r.p.Ready
	s.requestStop(r, intentFail, now)
}

// onStartupReady records the readiness of a oneshot or job and begins its
// liveness check.
func (s *Supervisor) onStartupReady(r *record, ready bool, now time.Time) {
	if !ready || r.ready || r.child == nil {
		return
	}
	r.ready, r.readyAt, r.due = true, now, time.Time{}
	s.tl.Ready(r.p.Name, r.gen, now)
	s.log.Info("started up", "process", r.p.Name, "after", now.Sub(r.startedAt).Round(time.Millisecond).String())
	if r.p.Live != nil && s.phase != PhaseStopping {
		var ctx context.Context
		if r.cancelProbe == nil {
			ctx, r.cancelProbe = context.WithCancel(s.probeCtx)
		} else {
			ctx, r.cancelProbe = chainCancel(s.probeCtx, r.cancelProbe)
		}
		s.watch(ctx, r, r.p.Live, "live", now)
	}
}
