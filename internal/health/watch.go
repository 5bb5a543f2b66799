package health

import (
	"context"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// Timing is a probe's schedule and thresholds.
type Timing struct {
	InitialDelay     time.Duration // before the first attempt
	StartInterval    time.Duration // between attempts until the first time SuccessThreshold is reached
	Interval         time.Duration // between attempts afterwards
	Timeout          time.Duration // bound on one attempt
	SuccessThreshold int           // consecutive successes that make it ready
	FailureThreshold int           // consecutive failures that make it not ready
	// StartReady makes the watch start in the ready state, for liveness: a
	// process is healthy until FailureThreshold consecutive failures say
	// otherwise, including failures before its first success.
	StartReady bool
}

// TimingFrom returns p's timing, with the defaults of docs/reference.md ("Probes") for unset (zero) fields.
func TimingFrom(p *config.Probe) Timing {
	return Timing{
		InitialDelay:     p.InitialDelay,
		StartInterval:    p.StartInterval,
		Interval:         p.Interval,
		Timeout:          p.Timeout,
		SuccessThreshold: p.SuccessThreshold,
		FailureThreshold: p.FailureThreshold,
	}.withDefaults()
}

func (t Timing) withDefaults() Timing {
	if t.InitialDelay < 0 {
		t.InitialDelay = 0
	}
	if t.StartInterval <= 0 {
		t.StartInterval = config.DefaultStartInterval
	}
	if t.Interval <= 0 {
		t.Interval = config.DefaultInterval
	}
	if t.Timeout <= 0 {
		t.Timeout = config.DefaultProbeTimeout
	}
	if t.SuccessThreshold < 1 {
		t.SuccessThreshold = config.DefaultSuccessThreshold
	}
	if t.FailureThreshold < 1 {
		t.FailureThreshold = config.DefaultFailureThreshold
	}
	return t
}

// period is the time between attempt starts: StartInterval until the
// success threshold is first reached, Interval after.
func (t Timing) period(th *thresholds) time.Duration {
	if !th.reached {
		return t.StartInterval
	}
	return t.Interval
}

// maxInconclusiveBackoff caps the wait after inconclusive attempts.
const maxInconclusiveBackoff = 30 * time.Second

// Transition is a change of the ready (or, for liveness, healthy) state.
// Detail is the Result.Detail of the attempt that caused it.
type Transition struct {
	Ready  bool
	Detail string
	At     time.Time
}

// Watch probes c on t's schedule until ctx is done and calls emit on every
// change of state (never for a repeated sample); the first call is Ready=true
// once SuccessThreshold consecutive successes are seen (for t.StartReady,
// Ready=false after FailureThreshold consecutive failures). observe, if not
// nil, gets every attempt's duration and outcome (for metrics).
//
// Schedule: wait InitialDelay, then one attempt every StartInterval until
// SuccessThreshold is first reached, then every Interval. Periods run from the
// start of one attempt to the start of the next; only one attempt is ever in
// flight, so a slow attempt delays the next rather than overlapping it. Each
// attempt's ctx is derived from ctx with t.Timeout, so nothing outlives Watch.
// An attempt cut short because ctx ended is not reported.
//
// emit and observe run on Watch's goroutine and should only hand off.
func Watch(ctx context.Context, c Checker, t Timing, emit func(Transition), observe func(d time.Duration, ok bool)) {
	t = t.withDefaults()
	th := newThresholds(t)
	inconclusive := 0 // consecutive inconclusive attempts
	timer := time.NewTimer(t.InitialDelay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, t.Timeout)
		res := c.Check(actx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		if res.Inconclusive {
			// podvisor's own shortage, not the process's failure: try
			// again later, backing off, without counting anything.
			inconclusive = min(inconclusive+1, 16)
			timer.Reset(min(t.period(th)<<inconclusive, maxInconclusiveBackoff))
			continue
		}
		inconclusive = 0
		if observe != nil {
			observe(now.Sub(start), res.OK)
		}
		if th.record(res.OK) {
			emit(Transition{Ready: th.ready, Detail: res.Detail, At: now})
		}
		timer.Reset(start.Add(t.period(th)).Sub(now))
	}
}

// thresholds is the pure hysteresis state of a watch: it turns a sequence of
// attempt outcomes into state changes.
type thresholds struct {
	success, failure int  // thresholds
	ready            bool // current state
	reached          bool // SuccessThreshold consecutive successes seen at least once
	succ, fail       int  // current run of consecutive successes / failures
}

func newThresholds(t Timing) *thresholds {
	return &thresholds{success: t.SuccessThreshold, failure: t.FailureThreshold, ready: t.StartReady}
}

// record adds one outcome and reports whether the state changed.
func (s *thresholds) record(ok bool) bool {
	if ok {
		s.succ++
		s.fail = 0
		if s.succ < s.success {
			return false
		}
		s.reached = true
		if s.ready {
			return false
		}
		s.ready = true
		return true
	}
	s.fail++
	s.succ = 0
	if !s.ready || s.fail < s.failure {
		return false
	}
	s.ready = false
	return true
}
