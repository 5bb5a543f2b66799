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
	r := ffStartHTTP(t, `
processes:
  app:
    command: `+ffq("exec sleep 600")+`
  tick:
    type: oneshot
    command: `+ffq(ev("tick", "run"))+`
    schedule: {every: 400ms}
`)
	// Ready at once: a scheduled oneshot is not part of the start-up.
	eventually(t, 5*time.Second, func() bool { code, _ := r.Get(t, "/readyz"); return code == http.StatusOK }, "not ready")
	if n := len(filterEvents(r.ReadEvents(t), "tick", "run")); n > 0 {
		t.Errorf("%d runs before the first tick", n)
	}
	eventually(t, 10*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "tick", "run")) >= 3 }, "fewer than 3 runs")
	runs := filterEvents(r.ReadEvents(t), "tick", "run")
	for i := 1; i < len(runs); i++ {
		if d := runs[i].At.Sub(runs[i-1].At); d < 300*time.Millisecond || d > 400*time.Millisecond+eps() {
			t.Errorf("run %d came %v after the last, want about 400ms", i, d)
		}
	}
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
	ffStopClean(t, r, 10*time.Second)
}
