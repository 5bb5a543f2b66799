// Sidecars held while a regular process stops (its stop.command, then its
// signal until it exits), as the kubelet holds them: its pod worker is
// blocked in the container's kill (preStop included), so it neither
// restarts a sidecar nor acts on its probes then (docs/kubernetes.md). A sidecar with restart.during_termination
// (KEP-4438) is not held.

package supervisor

import "time"

// holdsSidecar reports whether r is a sidecar that waits while a regular
// process stops.
func holdsSidecar(r *record) bool {
	return r.p.Sidecar && !r.p.Restart.DuringTermination
}

// stepSidecarHold begins the hold when a regular process is stopping,
// stopping the probes of held sidecars, and ends it when none is, starting
// their probes again.
func (s *Supervisor) stepSidecarHold(now time.Time) {
	hold := false
	for _, r := range s.recs {
		if !r.p.Sidecar && r.state == Stopping && r.cur.child != nil {
			hold = true
			break
		}
	}
	if hold == s.sidecarHold {
		return
	}
	s.sidecarHold = hold
	for _, r := range s.recs {
		if !holdsSidecar(r) || r.cur.child == nil || r.state == Stopping {
			continue
		}
		if hold {
			s.stopProbes(r, false)
			continue
		}
		s.resumeProbes(r, now)
	}
}

// resumeProbes starts again the checks a held sidecar had: its startup
// check while it starts, else its readiness and liveness.
func (s *Supervisor) resumeProbes(r *record, now time.Time) {
	if r.state == Starting && !r.cur.startedUp && r.p.Startup != nil {
		s.watch(s.incarnationCtx(r), r, r.p.Startup, "startup", now)
		return
	}
	if r.p.Ready != nil && isPolled(r.p.Ready.Kind) {
		s.watchReady(r, now)
	}
	if r.p.Live != nil && r.state == Running {
		s.watch(s.incarnationCtx(r), r, r.p.Live, "live", now)
	}
}

// sidecarHeld reports whether r may not restart now.
func (s *Supervisor) sidecarHeld(r *record) bool {
	return s.sidecarHold && holdsSidecar(r)
}
