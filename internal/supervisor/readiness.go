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
	case config.ProbeHTTP, config.ProbeTCP, config.ProbeGRPC, config.ProbeExec, config.ProbeFile:
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
	idx, gen, name := r.idx, r.cur.gen, r.p.Name
	c = &shortageLogger{Checker: c, log: s.log, process: name, probe: which}
	t := health.TimingFrom(probe)
	var observe func(time.Duration, bool)
	if s.tl.on != nil {
		observe = func(d time.Duration, ok bool) { s.tl.ProbeObserved(name, which, d, ok) }
	}
	if which == "startup" {
		// Detail for /status and the start timeout's line, as for ready;
		// failure_threshold failures in a row are a failed start.
		c = &reportingChecker{Checker: c, failed: func(detail string) {
			s.send(probeFailedEv{idx: idx, gen: gen, detail: detail})
		}}
		c = &failureCounter{Checker: c, threshold: max(probe.FailureThreshold, 1), failed: func(detail string) {
			s.send(startupEv{idx: idx, gen: gen, detail: detail})
		}}
		go health.Watch(ctx, c, t, func(tr health.Transition) {
			if tr.Ready {
				s.send(startupEv{idx: idx, gen: gen, ok: true, detail: tr.Detail})
			}
		}, observe)
		return
	}
	if which == "ready" || which == "completed" {
		// Watch reports only transitions; until the first success the loop
		// hears nothing, so a failed attempt's detail (timeout, not found,
		// HTTP 500) is passed on here for the "still waiting" and "start
		// timeout" lines and /status (docs/reliability.md, C1, C3). A
		// completed process's check (completion.go) reports both as one
		// event of its own.
		report := func(ready bool, detail string, attempt bool) event {
			switch {
			case which == "completed":
				return completedReadyEv{idx: idx, gen: gen, ready: ready, detail: detail}
			case attempt:
				return probeFailedEv{idx: idx, gen: gen, detail: detail}
			}
			return readyEv{idx: idx, gen: gen, ready: ready, detail: detail}
		}
		c = &reportingChecker{Checker: c, failed: func(detail string) { s.send(report(false, detail, true)) }}
		go health.Watch(ctx, c, t, func(tr health.Transition) { s.send(report(tr.Ready, tr.Detail, false)) }, observe)
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
	r.cur.readyDetail = detail
	switch {
	case readinessChecked(r):
		s.onJobReadiness(r, ready, detail) // jobprobes.go
		return
	case startupChecked(r):
		if ready {
			s.onStartedUp(r, now) // jobprobes.go
		}
		return
	}
	if r.p.Type != config.Service || ready == r.cur.ready {
		return
	}
	if !r.cur.startedUp {
		r.cur.ready = ready // before its startup check passed: acted on once it has
		return
	}
	r.cur.ready = ready
	if !ready {
		s.log.Warn("not ready", "process", r.p.Name, "detail", detail)
		return
	}
	s.tl.Ready(r.p.Name, r.cur.gen, now)
	if r.cur.readyAt.IsZero() {
		r.cur.readyAt = now
		s.log.Info("ready", "process", r.p.Name, "after", now.Sub(r.cur.startedAt).Round(time.Millisecond).String())
	} else {
		s.log.Info("ready again", "process", r.p.Name)
	}
	if r.state == Starting {
		s.setState(r, Running)
		r.cur.due = time.Time{}
		if r.p.Live != nil && s.phase != PhaseStopping {
			s.watch(s.incarnationCtx(r), r, r.p.Live, "live", now)
		}
	}
}

// chainCancel returns a context derived from parent whose cancel also calls prev.
func chainCancel(parent context.Context, prev context.CancelFunc) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	return ctx, func() { cancel(); prev() }
}

// isReady is the per-process part of /readyz: services ready (or completed
// with remain_after_exit), oneshots completed and their ready check passed;
// jobs do not count (they end the run), unless they have a `ready` check:
// then once it passed (completion.go).
func (s *Supervisor) isReady(r *record) bool {
	if r.op.gone || r.op.outside || r.p.Schedule != nil {
		return true // removed by a reload, not in this run, or scheduled (not part of the start-up): does not count
	}
	switch {
	case r.state == Completed:
		return completedReady(r)
	case r.p.Type == config.Service:
		return r.cur.ready && r.cur.child != nil && r.state == Running
	case r.p.Type == config.Oneshot:
		return false
	case r.p.Ready != nil:
		return jobReadyWhileRunning(r)
	}
	return true
}

// watchReady starts r's ready check: under r.cancelProbe, or with a cancel
// of its own (r.cancelReady) when it goes on while r stops.
func (s *Supervisor) watchReady(r *record, now time.Time) {
	var ctx context.Context
	if r.p.Ready.WhileStopping {
		ctx, r.cur.cancelReady = context.WithCancel(s.probeCtx)
	} else {
		ctx = s.incarnationCtx(r)
	}
	s.watch(ctx, r, r.p.Ready, "ready", now)
}

// stopProbes ends r's checks. stopping: r is being stopped and still
// runs, so a ready check with while_stopping goes on until it exits (the
// kubelet probes a terminating container's readiness, fault C13 of docs/reliability.md holds for
// everything else).
func (s *Supervisor) stopProbes(r *record, stopping bool) {
	if r.cur.cancelProbe != nil {
		r.cur.cancelProbe()
		r.cur.cancelProbe = nil
	}
	if r.cur.cancelReady != nil && (!stopping || r.cur.child == nil) {
		r.cur.cancelReady()
		r.cur.cancelReady = nil
	}
}

// probedWhileStopping reports whether r's readiness results count while it
// stops (while_stopping on a ready check that is readiness).
func probedWhileStopping(r *record) bool {
	return r.p.Ready != nil && r.p.Ready.WhileStopping && (r.p.Type == config.Service || readinessChecked(r))
}

// onReadyWhileStopping records a readiness result of a process that is
// being stopped: its ready state only, nothing starts or stops.
func (s *Supervisor) onReadyWhileStopping(r *record, ready bool, detail string) {
	r.cur.readyDetail = detail
	if ready == r.cur.ready {
		return
	}
	r.cur.ready = ready
	s.log.Info("readiness while stopping", "process", r.p.Name, "ready", ready, "detail", detail)
}

// shownReady is a process's `ready` in /status and the metrics.
func (s *Supervisor) shownReady(r *record) bool {
	if r.cur.child != nil && probedWhileStopping(r) && (r.state == Stopping || s.phase == PhaseStopping) {
		return r.cur.ready && (r.p.Type == config.Service || r.cur.startedUp)
	}
	if r.p.Type == config.Job && r.p.Ready == nil {
		return r.state == Completed
	}
	return s.isReady(r)
}

func (s *Supervisor) allReady() bool {
	for _, r := range s.recs {
		if !s.isReady(r) {
			return false
		}
	}
	return true
}
