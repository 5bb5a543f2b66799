package supervisor

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/health"
)

// A job whose startup check never passes within start_timeout is stopped
// as a failed start; under restart: never that ends the run with its code.
func TestJobMissesItsStartupCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  test:
    command: [t]
    type: job
    restart: never
    ready: {exec: [probe], start_interval: 1s, interval: 1s}
    start_timeout: 3s
    stop: {timeout: 5s}
`, map[string]script{"test": {exitAfter: time.Hour, stopDelay: 100 * time.Millisecond}},
			map[string]func(int) health.Result{"test/ready": func(int) health.Result { return health.Result{OK: false} }})
		o := h.wait(time.Minute)
		h.mustHave("3s signal test TERM", "3.1s exit test 143")
		// SPEC: a missed start_timeout has no exit code of its own: 1.
		if o.Reason != ReasonFatal || o.ExitCode() != 1 {
			t.Errorf("outcome %+v exit %d, want fatal with 1", o, o.ExitCode())
		}
	})
}

// A job whose startup check passes runs to completion; its liveness check
// begins only then.
func TestJobStartupCheckThenLiveness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  test:
    command: [t]
    type: job
    restart: never
    ready: {exec: [probe], start_interval: 1s, interval: 1s}
    start_timeout: 5s
    live: {exec: [live], interval: 1s}
`, map[string]script{"test": {exitAfter: 6 * time.Second}},
			map[string]func(int) health.Result{
				"test/ready": func(n int) health.Result { return health.Result{OK: n >= 2} },
				"test/live":  func(int) health.Result { return health.Result{OK: true} },
			})
		o := h.wait(time.Minute)
		if o.Reason != ReasonJobsDone || o.ExitCode() != 0 {
			t.Errorf("outcome %+v exit %d, want jobs done, 0", o, o.ExitCode())
		}
		h.mustHave("6s exit test 0")
		if i, j := h.index("probe test/ready true"), h.index("probe test/live true"); i < 0 || j < i {
			t.Errorf("liveness (%d) before the startup check passed (%d)", j, i)
		}
	})
}

// A failed liveness check's stop has the check's stop_timeout, not
// stop.timeout (the kubelet's probe-level terminationGracePeriodSeconds).
func TestLivenessStopTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  web:
    command: [w]
    restart: never
    live: {exec: [live], start_interval: 1s, interval: 1s, failure_threshold: 1, stop_timeout: 2s}
    stop: {timeout: 10s}
`, map[string]script{"web": {ignoreTerm: true}},
			map[string]func(int) health.Result{"web/live": func(n int) health.Result { return health.Result{OK: n < 3} }})
		h.wait(time.Minute)
		h.mustHave("2s signal web TERM", "4s signal web KILL")
	})
}
