package supervisor

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func countSuffix(h *harness, suffix string) int {
	n := 0
	for _, e := range h.f.events() {
		if strings.HasSuffix(e, suffix) {
			n++
		}
	}
	return n
}

func TestScheduleEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  app: {command: [a]}
  job: {command: [j], type: oneshot, schedule: {every: 10s}}
`, map[string]script{"job": {exitAfter: time.Second}})
		time.Sleep(35 * time.Second)
		h.mustHave("10s start job", "11s exit job 0", "20s start job", "30s start job")
		if n := countSuffix(h, "start job"); n != 3 {
			t.Errorf("%d runs, want 3 (none at the start-up)", n)
		}
		s := h.sup.Snapshot()
		if !s.Ready {
			t.Errorf("not ready: a scheduled oneshot is not part of the start-up")
		}
		for _, p := range s.Processes {
			if p.Name == "job" && (p.ScheduledRuns != 3 || !p.NextRun.Equal(time.Date(2000, 1, 1, 0, 0, 40, 0, time.UTC))) {
				t.Errorf("job %+v", p)
			}
		}
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.ExitCode() != 0 {
			t.Errorf("outcome %+v", o)
		}
	})
}

func TestScheduleCron(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble starts at 2000-01-01 00:00:00 UTC.
		h := start(t, `
processes:
  job: {command: [j], type: oneshot, schedule: {cron: "*/5 * * * *", timezone: UTC}}
`, map[string]script{"job": {exitAfter: time.Second}})
		time.Sleep(11 * time.Minute)
		h.mustHave("5m0s start job", "10m0s start job")
		if n := countSuffix(h, "start job"); n != 2 {
			t.Errorf("%d runs, want 2", n)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestScheduleForbidAndReplace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  slow: {command: [s], type: oneshot, schedule: {every: 10s}}
  stuck: {command: [x], type: oneshot, schedule: {every: 10s, concurrency: replace}}
`, map[string]script{"slow": {exitAfter: 15 * time.Second}})
		time.Sleep(31 * time.Second)
		// slow runs 10-25s: the 20s tick is skipped, the 30s one runs.
		h.mustHave("10s start slow", "25s exit slow 0", "30s start slow")
		h.mustNotHaveSuffix("20s start slow")
		// stuck never ends: each tick stops it and starts it anew.
		h.mustHave("10s start stuck", "20s signal stuck TERM", "20s exit stuck 143", "20s start stuck", "30s start stuck")
		for _, p := range h.sup.Snapshot().Processes {
			if p.Name == "slow" && p.SkippedRuns != 1 {
				t.Errorf("slow %+v", p)
			}
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// A wall-clock jump past many ticks runs the process once, not once per
// missed tick; the ticks go on from the new time.
func TestScheduleClockJumpRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var offset atomic.Int64
		f := newFake(map[string]script{"job": {exitAfter: time.Second}})
		sup, err := New(Options{Config: parse(t, `
processes:
  job: {command: [j], type: oneshot, schedule: {every: 10s}}
`), Launcher: f, WallClock: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
		if err != nil {
			t.Fatal(err)
		}
		watchTransitions(t, sup)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		time.Sleep(12 * time.Second)
		offset.Store(int64(time.Hour)) // 360 ticks missed
		time.Sleep(15 * time.Second)
		// The loop's timer (monotonic) still wakes at 20s; the wall clock
		// then says 1h20s: one run, and the next tick 10s later.
		h.mustHave("10s start job", "20s start job")
		if n := countSuffix(h, "start job"); n != 2 {
			t.Errorf("%d runs, want 2: %v", n, h.f.events())
		}
		time.Sleep(5 * time.Second)
		h.mustHave("30s start job")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
