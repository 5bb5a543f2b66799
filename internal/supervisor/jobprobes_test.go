package supervisor

import (
	"strings"
	"syscall"
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

// A job's startup check that fails failure_threshold times in a row stops
// it as a failed start, its stop.command first; its ready check never ran.
func TestJobStartupCheckFailureThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  test:
    command: [t]
    type: job
    restart: never
    startup: {exec: [startup], start_interval: 1s, failure_threshold: 3}
    ready: {exec: [probe], start_interval: 1s, interval: 1s}
    stop: {timeout: 5s, command: [hook]}
`, map[string]script{"test": {exitAfter: time.Hour, stopDelay: 100 * time.Millisecond}},
			map[string]func(int) health.Result{
				"test/startup": func(int) health.Result { return health.Result{OK: false, Detail: "exit 1"} },
				"test/ready":   func(int) health.Result { return health.Result{OK: true} },
			})
		o := h.wait(time.Minute)
		h.mustHave("2s stopcmd test", "2s signal test TERM", "2.1s exit test 143")
		h.mustNotHaveSuffix("probe test/ready true")
		if o.Reason != ReasonFatal || o.ExitCode() != 1 {
			t.Errorf("outcome %+v exit %d, want fatal with 1", o, o.ExitCode())
		}
	})
}

// With a startup check, a job's ready check begins once it passed and is
// readiness: its ready state follows it both ways (/status, /readyz) and a
// failure never stops the job.
func TestJobReadinessAfterStartup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  test:
    command: [t]
    type: job
    restart: never
    startup: {exec: [startup], start_interval: 1s}
    ready: {exec: [probe], start_interval: 1s, interval: 1s, failure_threshold: 1}
`, map[string]script{"test": {exitAfter: 6500 * time.Millisecond}},
			map[string]func(int) health.Result{
				"test/startup": func(n int) health.Result { return health.Result{OK: n >= 2} },
				"test/ready":   func(n int) health.Result { return health.Result{OK: n <= 2} },
			})
		ready := func(at time.Duration, want bool) {
			t.Helper()
			time.Sleep(at - time.Since(h.f.t0))
			synctest.Wait()
			snap := h.sup.Snapshot()
			if snap.Ready != want || len(snap.Processes) != 1 || snap.Processes[0].Ready != want {
				t.Errorf("at %v: /readyz %v, process %+v; want ready %v", at, snap.Ready, snap.Processes, want)
			}
		}
		ready(500*time.Millisecond, false) // the startup check has not passed
		ready(2500*time.Millisecond, true)
		ready(4500*time.Millisecond, false) // readiness failed: not ready, still running
		o := h.wait(time.Minute)
		if o.Reason != ReasonJobsDone || o.ExitCode() != 0 {
			t.Errorf("outcome %+v exit %d, want jobs done, 0", o, o.ExitCode())
		}
		h.mustHave("6.5s exit test 0")
		h.mustNotHaveSuffix("signal test TERM")
		if i, j := h.index("probe test/startup true"), h.index("probe test/ready true"); i < 0 || j < i {
			t.Errorf("readiness (%d) before the startup check passed (%d)", j, i)
		}
	})
}

// A ready check with while_stopping goes on during the process's stop (its
// stop.command, then until it exits) and only sets its ready state; one
// without it, and every live check, ends when the teardown begins.
func TestReadinessWhileStopping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  web:
    command: [w]
    ready: {exec: [probe], start_interval: 1s, interval: 1s, failure_threshold: 1, while_stopping: true}
    live: {exec: [live], interval: 1s}
    stop: {timeout: 10s, command: [hook]}
  other:
    command: [o]
    ready: {exec: [probe], start_interval: 1s, interval: 1s}
`, map[string]script{"web": {hook: 3500 * time.Millisecond, stopDelay: 200 * time.Millisecond}, "other": {}},
			map[string]func(int) health.Result{
				"web/ready":   func(n int) health.Result { return health.Result{OK: n <= 4} },
				"web/live":    func(int) health.Result { return health.Result{OK: true} },
				"other/ready": func(int) health.Result { return health.Result{OK: true} },
			})
		time.Sleep(2500 * time.Millisecond)
		h.sigs <- syscall.SIGTERM
		time.Sleep(1000 * time.Millisecond) // 3.5s: the hook runs; readiness passed at 3s
		synctest.Wait()
		if p := procSnap(h.sup.Snapshot(), "web"); !p.Ready || p.State != "stopping" {
			t.Errorf("web during its stop.command: %+v, want stopping and ready", p)
		}
		time.Sleep(1000 * time.Millisecond) // 4.5s: the 5th attempt (4s) failed
		synctest.Wait()
		if p := procSnap(h.sup.Snapshot(), "web"); p.Ready {
			t.Errorf("web after a failed attempt in its stop: %+v, want not ready", p)
		}
		h.wait(time.Minute)
		h.mustHave("3s probe web/ready true", "4s probe web/ready false", "5s probe web/ready false",
			"6s signal web TERM", "6.2s exit web 143")
		for _, e := range h.f.events() {
			if (strings.Contains(e, "probe other/") || strings.Contains(e, "probe web/live")) && !strings.HasPrefix(e, "0s ") &&
				!strings.HasPrefix(e, "1s ") && !strings.HasPrefix(e, "2s ") {
				t.Errorf("a check went on after the teardown began: %q", e)
			}
			if strings.HasPrefix(e, "7s probe web/") {
				t.Errorf("web was probed after it exited: %q", e)
			}
		}
	})
}

func procSnap(s Snapshot, name string) ProcessSnapshot {
	for _, p := range s.Processes {
		if p.Name == name {
			return p
		}
	}
	return ProcessSnapshot{}
}

// A service with a startup check: its ready check begins once the startup
// check passed; start_timeout covers the startup check only (readiness
// never stops a process), so a slow readiness after it is waited for; the
// dependent starts once the service is ready.
func TestServiceStartupThenReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  a:
    command: [a]
    startup: {exec: [startup], start_interval: 1s, failure_threshold: 5}
    ready: {exec: [probe], start_interval: 1s, interval: 1s}
    start_timeout: 3s
  b:
    command: [b]
    depends_on: [a]
`, map[string]script{"a": {}, "b": {}},
			map[string]func(int) health.Result{
				"a/startup": func(n int) health.Result { return health.Result{OK: n >= 2} },
				"a/ready":   func(n int) health.Result { return health.Result{OK: n >= 6} },
			})
		time.Sleep(7 * time.Second)
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		h.mustHave("0s start a", "1s probe a/startup true", "1s probe a/ready false", "6s probe a/ready true", "6s start b")
		if i := h.index("signal a TERM"); i < h.index("signal b TERM") {
			t.Errorf("a was stopped before the teardown: %q", h.f.events())
		}
		if i, j := h.index("probe a/startup true"), h.index("probe a/ready false"); j < i {
			t.Errorf("readiness (%d) before the startup check passed (%d)", j, i)
		}
	})
}

// A service whose startup check fails failure_threshold times in a row is
// stopped as a failed start and restarted per its policy.
func TestServiceStartupFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  a:
    command: [a]
    startup: {exec: [startup], start_interval: 1s, failure_threshold: 2}
    ready: {exec: [probe], start_interval: 1s}
    restart: never
    stop: {timeout: 5s}
`, map[string]script{"a": {stopDelay: 100 * time.Millisecond}},
			map[string]func(int) health.Result{
				"a/startup": func(int) health.Result { return health.Result{OK: false, Detail: "no"} },
				"a/ready":   func(int) health.Result { return health.Result{OK: true} },
			})
		o := h.wait(time.Minute)
		h.mustHave("1s signal a TERM", "1.1s exit a 143")
		h.mustNotHaveSuffix("probe a/ready true")
		if o.Reason != ReasonFatal || o.ExitCode() != 1 {
			t.Errorf("outcome %+v exit %d, want fatal with 1", o, o.ExitCode())
		}
	})
}
