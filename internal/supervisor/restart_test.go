// Failures and restarts: fatal oneshots and spawn errors, backoff and its
// limit and reset, restart: true followers, liveness, start_timeout.

package supervisor

import (
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/health"
)

func TestOneshotFailureIsFatal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  migrate: {command: [m], type: oneshot}
  app: {command: [a], depends_on: {migrate: completed}}
`, map[string]script{"migrate": {exitAfter: time.Second, exitCodes: []int{7}}})
		o := h.wait(time.Minute)
		if o.ExitCode() != 7 || o.Process != "migrate" {
			t.Errorf("outcome %+v, want exit 7 from migrate", o)
		}
		h.mustNotHaveSuffix("start app")
		if s := h.sup.Snapshot(); s.Processes[1].State != "failed" || s.Processes[0].State != "stopped" {
			t.Errorf("final states %+v", s.Processes)
		}
	})
}

func TestSpawnErrorIsFatalExit1(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [nope]}
  b: {command: [b], depends_on: [a]}
  c: {command: [c]}
`, map[string]script{"a": {spawnErr: errNotFound}})
		o := h.wait(time.Minute)
		if o.ExitCode() != 1 || o.Process != "a" {
			t.Errorf("outcome %+v exit %d, want 1 from a", o, o.ExitCode())
		}
		h.mustNotHaveSuffix("start b")
	})
}

func TestRetryableSpawnErrorBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [a], restart: {policy: always, limit: 2}}
`, map[string]script{"a": {spawnErr: errNoPids}})
		o := h.wait(time.Minute)
		// EAGAIN (out of pids) is retried with backoff, then the limit is fatal.
		h.mustHave("0s spawnfail a", "500ms spawnfail a", "1.5s spawnfail a")
		if o.ExitCode() != 1 || o.Process != "a" {
			t.Errorf("outcome %+v", o)
		}
	})
}

func TestRestartBackoffAndLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  crash:
    command: [c]
    restart: {policy: always, limit: 4}
`, map[string]script{"crash": {exitAfter: 100 * time.Millisecond, exitCodes: []int{1}}})
		o := h.wait(time.Minute)
		// Runs of 100ms, then delays of 0.5s, 1s, 2s, 4s.
		h.mustHave("0s start crash", "600ms start crash", "1.7s start crash", "3.8s start crash", "7.9s start crash", "8s exit crash 1")
		if o.ExitCode() != 1 || o.Process != "crash" {
			t.Errorf("outcome %+v", o)
		}
		if s := h.sup.Snapshot(); s.Processes[0].Restarts != 4 || s.Processes[0].State != "failed" {
			t.Errorf("snapshot %+v", s.Processes[0])
		}
	})
}

func TestZeroExitUnderAlwaysIsRestartedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  quick: {command: [q]}
  once: {command: [o], restart: on-failure}
`, map[string]script{"quick": {exitAfter: 10 * time.Millisecond}, "once": {exitAfter: 10 * time.Millisecond}})
		time.Sleep(2 * time.Second)
		h.mustHave("510ms start quick", "1.52s start quick")
		if s := h.sup.Snapshot(); s.Processes[0].State != "stopped" {
			t.Errorf("on-failure service that exited 0 should be stopped, got %+v", s.Processes[0])
		}
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.ExitCode() != 0 {
			t.Errorf("exit %d", o.ExitCode())
		}
	})
}

func TestBackoffResetsAfterHealthyRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  flaky: {command: [f]}
`, map[string]script{"flaky": {exitAfter: 61 * time.Second, exitCodes: []int{1}}})
		time.Sleep(200 * time.Second)
		// Every run lasts 61s (healthy), so every delay is the base 500ms.
		h.mustHave("1m1.5s start flaky", "2m3s start flaky", "3m4.5s start flaky")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestTermDuringBackoffStartsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  crash: {command: [c], restart: {policy: always, backoff: 5s}}
`, map[string]script{"crash": {exitAfter: time.Second, exitCodes: []int{1}}})
		time.Sleep(2 * time.Second)
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		if o.ExitCode() != 0 {
			t.Errorf("exit %d", o.ExitCode())
		}
		if n := len(h.f.events()); h.f.events()[n-1] != "1s exit crash 1" {
			t.Errorf("something happened after the signal: %v", h.f.events())
		}
	})
}

func TestStartTimeoutIsFatalWithoutRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  slow:
    command: [s]
    ready: {notify: systemd}
    start_timeout: 3s
    restart: never
  app: {command: [a], depends_on: [slow]}
`, nil)
		o := h.wait(time.Minute)
		h.mustHave("3s signal slow TERM")
		h.mustNotHaveSuffix("start app")
		if o.ExitCode() != 1 || o.Process != "slow" {
			t.Errorf("outcome %+v exit %d, want 1", o, o.ExitCode())
		}
	})
}

func TestRestartTrueDependentFollowsDependency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  cache: {command: [c]}
  app:
    command: [a]
    depends_on: {cache: {condition: ready, restart: true}}
  other: {command: [o], depends_on: [cache]}
`, map[string]script{"cache": {exitAfter: 10 * time.Second, exitCodes: []int{1, 0}}, "app": {stopDelay: 2 * time.Second}})
		time.Sleep(20 * time.Second)
		// app is stopped when cache dies, cache waits for app to exit before
		// restarting, then app starts again; other (no restart: true) is untouched.
		h.mustHave("10s exit cache 1", "10s signal app TERM", "12s exit app 143", "12s start cache", "12s start app")
		h.mustNotHaveSuffix("signal other TERM")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestLivenessFailureRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  app:
    command: [a]
    live: {tcp: "127.0.0.1:1", interval: 1s, failure_threshold: 2}
`, map[string]script{"app": {stopDelay: 100 * time.Millisecond}}, map[string]func(int) health.Result{
			"app/live": func(n int) health.Result { return health.Result{OK: n < 3, Detail: "fake"} },
		})
		time.Sleep(10 * time.Second)
		// Two failures at 2s and 3s (threshold 2) stop it; it restarts after 500ms.
		h.mustHave("0s start app", "3s signal app TERM", "3.1s exit app 143", "3.6s start app")
		if s := h.sup.Snapshot(); s.Processes[0].Restarts < 1 {
			t.Errorf("restarts = %d", s.Processes[0].Restarts)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
