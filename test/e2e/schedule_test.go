package e2e

// Black-box test of schedule: against the real binary: a oneshot on
// `every:` runs at its ticks (not at the start-up, not holding readiness),
// its runs are logged, counted in /metrics and its next tick is in /status.

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSchedule_EveryRunsAtTicks(t *testing.T) {
	t.Parallel()
	const every = 400 * time.Millisecond
	// The ticks are start + k*every, k >= 1; podvisor starts after this.
	before := time.Now()
	r := ffStartHTTP(t, `
processes:
  app:
    command: `+ffq("exec sleep 600")+`
  tick:
    type: oneshot
    command: `+ffq(ev("tick", "run"))+`
    schedule: {every: 400ms}
`)
	// A scheduled oneshot is not part of the start-up: the pod is ready
	// without it, and stays ready while it runs and completes.
	eventually(t, 10*time.Second, func() bool { code, _ := r.Get(t, "/readyz"); return code == http.StatusOK }, "not ready")
	eventually(t, 20*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "tick", "run")) >= 3 }, "fewer than 3 runs")
	after := time.Now()
	if code, body := r.Get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d %s after the runs, want 200", code, body)
	}
	// The grid, not the gaps: a tick that fires late is followed by one on
	// time (a short gap), so only these hold whatever the machine's speed:
	// run i is at or after tick i+1 (none at the start-up, none early), and
	// there are no more runs than ticks have passed.
	runs := filterEvents(r.ReadEvents(t), "tick", "run")
	for i, run := range runs {
		if earliest := before.Add(time.Duration(i+1) * every); run.At.Before(earliest) {
			t.Errorf("run %d came %v after the start, before tick %d at %v", i, run.At.Sub(before), i+1, time.Duration(i+1)*every)
		}
	}
	if passed := int(time.Since(before) / every); len(runs) > passed {
		t.Errorf("%d runs within %v, more than the %d ticks passed", len(runs), time.Since(before), passed)
	}
	t.Logf("runs at %v after the start (3 seen %v after it)", ffLazy(func() string {
		var at []string
		for _, run := range runs {
			at = append(at, run.At.Sub(before).Round(time.Millisecond).String())
		}
		return strings.Join(at, " ")
	}), after.Sub(before).Round(time.Millisecond))
	st := ffGetStatus(t, r)
	if !strings.Contains(st.Raw, `"next_run"`) {
		t.Errorf("/status has no next_run: %s", st.Raw)
	}
	if v, ok := ffMetric(t, r, `podvisor_process_scheduled_runs_total{process="tick"}`); !ok || v < 3 {
		t.Errorf("scheduled_runs_total = %v (present %v)", v, ok)
	}
	if !strings.Contains(r.Stdout.String()+r.Stderr.String(), "scheduled run") {
		t.Errorf("runs are not logged")
	}
	// The critical chain is the start-up's: app's, not a tick's run
	// (issue 35 item 3).
	var tl struct {
		CriticalChain []struct{ Process string } `json:"critical_chain"`
	}
	getJSON(t, r, "/timeline", &tl)
	if n := len(tl.CriticalChain); n != 1 || tl.CriticalChain[0].Process != "app" {
		t.Errorf("critical chain %+v, want app alone", tl.CriticalChain)
	}
	ffStopClean(t, r, 10*time.Second)
}
