package supervisor

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/health"
)

// These tests pin the loop defects an outside review reproduced (issue
// "Hardening", docs/reliability.md H1-H14); each failed before its fix.

// countSuffix counts events ending in suffix.
func (h *harness) countSuffix(suffix string) int {
	n := 0
	for _, e := range h.f.events() {
		if strings.HasSuffix(e, suffix) {
			n++
		}
	}
	return n
}

// H1: `started` is not held by a dependency in backoff, so a restart: true
// dependent stops and waits instead of restarting at once and holding its
// dependency in backoff forever.
func TestRestartTrueStartedDependentWaitsForBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a:
    command: [a]
    restart: {policy: always, backoff: 500ms}
  b:
    command: [b]
    depends_on: {a: {condition: started, restart: true}}
`, map[string]script{"a": {exitAfter: time.Second, exitCodes: []int{1}, firstOnly: true}})
		time.Sleep(3 * time.Second)
		synctest.Wait()
		h.mustHave("1s exit a 1", "1s signal b TERM", "1s exit b 143", "1.5s start a", "1.5s start b")
		if n := h.countSuffix("start b"); n != 2 {
			t.Errorf("b started %d times, want 2 (once, then after a's restart); events:\n%s", n, strings.Join(h.f.events(), "\n"))
		}
		if snap := h.sup.Snapshot(); !snap.Ready {
			t.Errorf("not ready after the restart: %v", snap.NotReady)
		}
	})
}

// H3: restart: true cascades through a chain, dependents first.
func TestRestartTrueCascadesThroughChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a:
    command: [a]
    restart: {policy: always, backoff: 500ms}
  b:
    command: [b]
    depends_on: {a: {condition: ready, restart: true}}
  c:
    command: [c]
    depends_on: {b: {condition: ready, restart: true}}
`, map[string]script{
			"a": {exitAfter: time.Second, exitCodes: []int{1}, firstOnly: true},
			"b": {stopDelay: 100 * time.Millisecond},
			"c": {stopDelay: 100 * time.Millisecond},
		})
		time.Sleep(3 * time.Second)
		synctest.Wait()
		h.mustHave("1s exit a 1", "1s signal c TERM", "1.1s exit c 143", "1.1s signal b TERM", "1.2s exit b 143",
			"1.5s start a", "1.5s start b", "1.5s start c")
		if h.index("signal b TERM") < h.index("exit c 143") {
			t.Errorf("b stopped while c, which depends on it, still ran: %v", h.f.events())
		}
		if snap := h.sup.Snapshot(); !snap.Ready {
			t.Errorf("not ready after the cascade: %v", snap.NotReady)
		}
	})
}

// A liveness failure stops restart: true dependents before the process.
func TestLivenessFailureStopsRestartDependentsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		h := startWithChecks(t, `
processes:
  a:
    command: [a]
    live: {exec: [check], interval: 1s, failure_threshold: 1}
  b:
    command: [b]
    depends_on: {a: {condition: started, restart: true}}
`, map[string]script{"a": {stopDelay: 100 * time.Millisecond}, "b": {stopDelay: 300 * time.Millisecond}},
			map[string]func(int) health.Result{"a/live": func(int) health.Result {
				// The second attempt of the whole run fails, once.
				return health.Result{OK: calls.Add(1) != 2, Detail: "scripted"}
			}})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		sigB, exitB, sigA := h.index("signal b TERM"), h.index("exit b 143"), h.index("signal a TERM")
		if sigB < 0 || exitB < 0 || sigA < 0 || !(sigB < exitB && exitB < sigA) {
			t.Errorf("want b stopped and gone before a is signalled; events:\n%s", strings.Join(h.f.events(), "\n"))
		}
		if n := h.countSuffix("start b"); n != 2 {
			t.Errorf("b started %d times, want 2", n)
		}
	})
}

// H4: a second SIGTERM cuts a running stop.command off at once.
func TestSecondSignalCancelsStopCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
shutdown_timeout: 60s
processes:
  a:
    command: [a]
    stop: {command: [hook], timeout: 30s}
`, map[string]script{"a": {hook: 20 * time.Second}})
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		t0 := time.Now()
		o := h.wait(time.Minute)
		if waited := time.Since(t0); waited > 0 {
			t.Errorf("podvisor returned %v after the second signal, want at once", waited)
		}
		h.mustHave("1s stopcmd a", "2s stopcmd a cut", "2s signal a KILL")
		if o.ExitCode() != 1 {
			t.Errorf("exit code %d, want 1 (SIGKILL was needed)", o.ExitCode())
		}
	})
}

// H5: the first signal during a teardown that began by itself (jobs done) is
// not the "second" signal; a duplicate delivery is one signal.
func TestFirstSignalDuringJobTeardownIsNotSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  sidecar:
    command: [s]
    stop: {timeout: 10s}
  work:
    command: [w]
    type: job
    depends_on: {sidecar: started}
`, map[string]script{"work": {exitAfter: time.Second}, "sidecar": {stopDelay: 3 * time.Second}})
		time.Sleep(1500 * time.Millisecond)
		h.sigs <- syscall.SIGTERM // docker stop, during the sidecar's graceful flush
		time.Sleep(2 * time.Millisecond)
		h.sigs <- syscall.SIGTERM // the same TERM again (timeout signals pid and group)
		o := h.wait(time.Minute)
		h.mustHave("1s signal sidecar TERM", "4s exit sidecar 143")
		h.mustNotHaveSuffix("KILL")
		if o.ExitCode() != 0 || o.Reason != ReasonJobsDone {
			t.Errorf("outcome %+v exit %d, want jobs done, exit 0", o, o.ExitCode())
		}
	})
}

// H5: after that first signal, a real second one kills.
func TestSecondSignalAfterJobTeardownKills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  sidecar: {command: [s], stop: {timeout: 10s}}
  work: {command: [w], type: job}
`, map[string]script{"work": {exitAfter: time.Second}, "sidecar": {stopDelay: 3 * time.Second}})
		time.Sleep(1500 * time.Millisecond)
		h.sigs <- syscall.SIGTERM
		time.Sleep(500 * time.Millisecond)
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		h.mustHave("2s signal sidecar KILL")
		if o.ExitCode() != 1 {
			t.Errorf("exit %d, want 1", o.ExitCode())
		}
	})
}

// H5: a signal-started teardown ignores the duplicate of its own signal.
func TestDuplicateSignalDeliveryIsOneSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [a]}
`, map[string]script{"a": {stopDelay: 2 * time.Second}})
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		time.Sleep(5 * time.Millisecond)
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		h.mustNotHaveSuffix("KILL")
		h.mustHave("3s exit a 143")
		if o.ExitCode() != 0 {
			t.Errorf("exit %d, want 0", o.ExitCode())
		}
	})
}

// H6: readiness reported by an incarnation that is already stopping (a
// ready line in its TERM trap) is ignored.
func TestReadinessOfStoppingIncarnationIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a:
    command: [a]
    ready: {log: READY}
    start_timeout: 1s
    restart: {policy: always, backoff: 1s}
  b:
    command: [b]
    depends_on: [a]
`, map[string]script{"a": {readyOnTerm: true, stopDelay: 200 * time.Millisecond}})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		h.mustHave("1s signal a TERM", "1.2s exit a 143")
		h.mustNotHaveSuffix("start b")
		if snap := h.sup.Snapshot(); snap.Ready {
			t.Error("/readyz would answer 200 for a process that never became ready")
		}
	})
}

// H8: a hanging stop.command is cut off before the stop timeout, so the stop
// signal is still sent and the process can exit cleanly.
func TestHangingStopCommandStillSendsSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a:
    command: [a]
    stop: {command: [hook], timeout: 4s}
`, map[string]script{"a": {hook: time.Minute, stopDelay: 100 * time.Millisecond}})
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		h.mustHave("1s stopcmd a", "4s stopcmd a cut", "4s signal a TERM", "4.1s exit a 143")
		h.mustNotHaveSuffix("KILL")
		if o.ExitCode() != 0 {
			t.Errorf("exit %d, want 0", o.ExitCode())
		}
	})
}

// A process in backoff whose dependency is itself down waits for it.
func TestBackoffRestartWaitsForDependencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a:
    command: [a]
    restart: {policy: always, backoff: 500ms}
  b:
    command: [b]
    depends_on: [a]
    restart: {policy: always, backoff: 100ms}
`, map[string]script{
			"a": {exitAfter: time.Second, exitCodes: []int{1}, firstOnly: true},
			"b": {exitAfter: 1200 * time.Millisecond, exitCodes: []int{1}, firstOnly: true},
		})
		time.Sleep(3 * time.Second)
		synctest.Wait()
		h.mustHave("1s exit a 1", "1.2s exit b 1", "1.5s start a", "1.5s start b")
		h.mustNotHaveSuffix("1.3s start b")
		if r := h.sup.Snapshot().Processes[1]; r.Name != "b" || r.Restarts != 1 {
			t.Errorf("b = %+v, want 1 restart", r)
		}
	})
}

// A child that survives SIGKILL (uninterruptible sleep) does not keep
// podvisor alive forever.
func TestUnkillableChildIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
shutdown_timeout: 2s
processes:
  a: {command: [a], stop: {timeout: 10s}}
`, map[string]script{"a": {ignoreTerm: true, ignoreKill: true}})
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		t0 := time.Now()
		o := h.wait(time.Minute)
		if got := time.Since(t0); got != 2*time.Second+finalGrace {
			t.Errorf("returned after %v, want shutdown_timeout + %v", got, finalGrace)
		}
		if o.ExitCode() != 1 {
			t.Errorf("exit %d, want 1", o.ExitCode())
		}
		close(h.f.quit) // the kernel finally lets it go
	})
}

// A dependent whose leader exits by itself during teardown while its group
// lives on still holds its dependencies back until the group is empty.
func TestTeardownWaitsForGroupOfSelfExitedLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [a]}
  b: {command: [b], depends_on: [a]}
  c: {command: [c], depends_on: [b]}
`, map[string]script{
			"c": {stopDelay: time.Second},
			"b": {exitAfter: 1500 * time.Millisecond, groupLinger: time.Second},
		})
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		h.mustHave("1s signal c TERM", "1.5s exit b 0", "2s exit c 143")
		for _, e := range h.f.events() {
			if strings.HasSuffix(e, "signal a TERM") {
				at, err := time.ParseDuration(strings.Fields(e)[0])
				if err != nil || at < 2500*time.Millisecond {
					t.Errorf("a signalled at %q, before b's group was empty (2.5s)", e)
				}
			}
		}
		if h.index("signal a TERM") < 0 {
			t.Errorf("a never signalled: %v", h.f.events())
		}
	})
}
