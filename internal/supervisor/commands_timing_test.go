// Commands at awkward moments: after the run, during a stop hook, during
// start-up, on a held process that crashes, on a running job.

package supervisor

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestCommandAfterExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, nil)
		synctest.Wait()
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		if res := h.do("stop", names("db")); res.OK || !strings.Contains(res.Error, "exit") {
			t.Fatalf("after exit: %+v", res)
		}
		if _, err := h.sup.Tail("dbb"); err == nil || !errors.Is(err, err) || !strings.Contains(err.Error(), `did you mean "db"`) {
			t.Fatalf("Tail unknown: %v", err)
		}
	})
}

// start while the stop.command of a stop is still running: the process
// comes back once the old incarnation is gone, never two at once.
func TestStartDuringStopHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  a: {command: [a], stop: {command: [hook], timeout: 10s}}
`, map[string]script{"a": {hook: 3 * time.Second}})
		synctest.Wait()
		done := make(chan Response, 1)
		go func() { done <- h.do("stop", names("a")) }()
		synctest.Wait() // the hook runs
		res := h.do("start", names("a"))
		if !res.OK {
			t.Fatalf("start: %s", resultText(res))
		}
		if r := <-done; r.OK {
			t.Errorf("stop overtaken by start reported ok: %s", resultText(r))
		}
		h.mustHave("3s signal a TERM", "3s exit a 143", "3s start a")
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start a"); n != 2 {
			t.Fatalf("a started %d times:\n%s", n, strings.Join(h.f.events(), "\n"))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// A process whose stop waits for its dependents, and that crashes
// meanwhile, stays stopped: its restart policy does not apply.
func TestHeldProcessCrashingIsNotRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  db: {command: [db], restart: always}
  app: {command: [app], depends_on: [db]}
`, map[string]script{"app": {stopDelay: 5 * time.Second}, "db": {exitAfter: 2 * time.Second, exitCodes: []int{1}}})
		time.Sleep(time.Second)
		res := h.do("stop", names("db")) // db crashes at 2s while app takes 5s to stop
		if !res.OK {
			t.Fatalf("stop: %s", resultText(res))
		}
		time.Sleep(time.Minute)
		if st, why, _ := h.state("db"); st != "stopped" || why != reasonHeld {
			t.Fatalf("db %s (%s), want stopped by podvisor stop", st, why)
		}
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start db"); n != 1 {
			t.Fatalf("db restarted by policy while stopped:\n%s", strings.Join(h.f.events(), "\n"))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Commands during start-up: a pending process can be stopped (it then never
// starts) and a starting one restarted; the rest of the start-up goes on.
func TestCommandsDuringStartup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  db: {command: [db], ready: {log: READY}}
  app: {command: [app], depends_on: [db]}
  other: {command: [other]}
`, map[string]script{"db": {readyAfter: 10 * time.Second}})
		synctest.Wait()
		res := h.do("stop", names("app"))
		if !res.OK || resultText(res) != "app ok stopped" {
			t.Fatalf("stop pending app: %s", resultText(res))
		}
		t0 := time.Now()
		res = h.do("restart", names("db")) // starting, not yet ready
		if waited := time.Since(t0); waited != 10*time.Second {
			t.Errorf("restart answered after %v, want once the new db is ready (10s)", waited)
		}
		if !res.OK || !strings.Contains(resultText(res), "db ok restarted (pid ") || !strings.Contains(resultText(res), "ready") {
			t.Fatalf("restart starting db: %s", resultText(res))
		}
		time.Sleep(time.Minute)
		if st, why, _ := h.state("app"); st != "stopped" || why != reasonHeld {
			t.Fatalf("app: %s (%s)", st, why)
		}
		h.mustNotHaveSuffix("start app")
		h.mustHave("0s start db", "0s signal db TERM", "0s exit db 143")
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start db"); n != 2 {
			t.Fatalf("db started %d times", n)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// stop of a running job: it stays stopped, does not count as completed, and
// podvisor keeps running (the run ends on a signal, or when the job is
// started again and completes).
func TestStopRunningJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  work: {command: [w], type: job}
  side: {command: [s]}
`, map[string]script{"work": {exitAfter: 10 * time.Second, firstOnly: true}})
		time.Sleep(time.Second)
		if res := h.do("stop", names("work")); !res.OK {
			t.Fatalf("stop job: %s", resultText(res))
		}
		time.Sleep(time.Minute)
		if st, why, _ := h.state("work"); st != "stopped" || why != reasonHeld {
			t.Fatalf("work: %s (%s)", st, why)
		}
		select {
		case o := <-h.out:
			t.Fatalf("podvisor ended with a stopped job: %+v", o)
		default:
		}
		if res := h.do("start", names("work")); !res.OK {
			t.Fatalf("start job: %s", resultText(res))
		}
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.Reason != ReasonSignal {
			t.Fatalf("outcome %+v", o)
		}
	})
}
