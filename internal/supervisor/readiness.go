// Readiness and liveness: the probes' watchers and what their results do.

package supervisor

import (
	"context"
	"log/slog"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
)

func isPolled(k config.ProbeKind) bool {
	switch k {
	case config.ProbeHTTP, config.ProbeTCP, config.ProbeExec, config.ProbeFile:
		return true
	}
	return false
}

// watch starts a probe goroutine for the record's current generation.
func (s *Supervisor) watch(ctx context.Context, r *record, probe *config.Probe, which string, since time.Time) {
	if s.checkers == nil {
		s.log.Error("no checker factory: probe ignored", "process", r.p.Name, "probe", which)
		return
	}
	c, err := s.checkers(r.p, probe, since)
	if err != nil {
		s.log.Error("cannot build probe", "process", r.p.Name, "probe", which, "err", err)
		return
	}
	idx, gen, name := r.idx, r.gen, r.p.Name
	c = &shortageLogger{Checker: c, log: s.log, process: name, probe: which}
	t := health.TimingFrom(probe)
	var observe func(time.Duration, bool)
	if s.obs != nil {
		observe = func(d time.Duration, ok bool) { s.obs.ProbeObserved(name, which, d, ok) }
	}
	if which == "ready" {
		// Watch reports only transitions; until the first success the loop
		// hears nothing, so a failed attempt's detail (timeout, not found,
		// HTTP 500) is passed on here for the "still waiting" and "start
		// timeout" lines and /status (FAULTS C1, C3).
		c = &reportingChecker{Checker: c, failed: func(detail string) {
			s.send(probeFailedEv{idx: idx, gen: gen, detail: detail})
		}}
		go health.Watch(ctx, c, t, func(tr health.Transition) {
			s.send(readyEv{idx: idx, gen: gen, ready: tr.Ready, detail: tr.Detail})
		}, observe)
		return
	}
	t.StartReady = true
	go health.Watch(ctx, c, t, func(tr health.Transition) {
		s.send(liveEv{idx: idx, gen: gen, healthy: tr.Ready, detail: tr.Detail})
	}, observe)
}

// shortageLogger logs when podvisor's own resources (fds, memory,
// processes) keep a probe from running, and when it runs again: such
// attempts are not failures of the process (health.Result.Inconclusive).
type shortageLogger struct {
	health.Checker
	log            *slog.Logger
	process, probe string
	short          bool // only touched by the Watch goroutine
}

func (c *shortageLogger) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	switch {
	case res.Inconclusive && !c.short:
		c.short = true
		c.log.Error("cannot run probe (podvisor's own resources; not counted against the process, retrying with backoff)", "process", c.process, "probe", c.probe, "detail", res.Detail)
	case !res.Inconclusive && c.short:
		c.short = false
		c.log.Info("probe runs again", "process", c.process, "probe", c.probe)
	}
	return res
}

// reportingChecker passes on the detail of failed attempts whose detail
// differs from the previous failure's, so a steady failure costs one event.
type reportingChecker struct {
	health.Checker
	failed func(detail string)
	last   string // only touched by the Watch goroutine that calls Check
}

func (c *reportingChecker) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	if !res.OK && !res.Inconclusive && res.Detail != c.last {
		c.last = res.Detail
		c.failed(res.Detail)
	}
	if res.OK {
		c.last = ""
	}
	return res
}

func (s *Supervisor) onReady(r *record, ready bool, detail string, now time.Time) {
	r.readyDetail = detail
	if startupChecked(r) {
		s.onStartupReady(r, ready, now) // jobprobes.go
		return
	}
	if r.p.Type != config.Service || ready == r.ready {
		return
	}
	r.ready = ready
	if !ready {
		s.log.Warn("not ready", "process", r.p.Name, "detail", detail)
		return
	}
	s.tl.Ready(r.p.Name, r.gen, now)
	if r.readyAt.IsZero() {
		r.readyAt = now
		s.log.Info("ready", "process", r.p.Name, "after", now.Sub(r.startedAt).Round(time.Millisecond).String())
	} else {
		s.log.Info("ready again", "process", r.p.Name)
	}
	if r.state == Starting {
		s.setState(r, Running)
		r.due = time.Time{}
		if r.p.Live != nil && s.phase != PhaseStopping {
			var ctx context.Context
			if r.cancelProbe == nil {
				ctx, r.cancelProbe = context.WithCancel(s.probeCtx)
			} else {
				// One cancel must stop both probes of the incarnation.
				ctx, r.cancelProbe = chainCancel(s.probeCtx, r.cancelProbe)
			}
			s.watch(ctx, r, r.p.Live, "live", now)
		}
	}
}

// chainCancel returns a context derived from parent whose cancel also calls prev.
func chainCancel(parent context.Context, prev context.CancelFunc) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	return ctx, func() { cancel(); prev() }
}

// isReady is the per-process part of /readyz: services ready, oneshots
// completed; jobs do not count (they end the run).
func (s *Supervisor) isReady(r *record) bool {
	if r.gone || r.p.Schedule != nil {
		return true // removed by a reload, or scheduled (not part of the start-up): no longer counts
	}
	switch r.p.Type {
	case config.Service:
		return r.ready && r.child != nil && r.state == Running
	case config.Oneshot:
		return r.state == Completed
	}
	return true
}

func (s *Supervisor) allReady() bool {
	for _, r := range s.recs {
		if !s.isReady(r) {
			return false
		}
	}
	return true
}
