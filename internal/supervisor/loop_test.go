package supervisor

import (
	"context"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/health"
)

func TestStateNames(t *testing.T) {
	want := map[State]string{Pending: "pending", Starting: "starting", Running: "running", Backoff: "backoff",
		Stopping: "stopping", Stopped: "stopped", Completed: "completed", Failed: "failed"}
	for s := Pending; s <= Failed; s++ {
		if s.String() != want[s] {
			t.Errorf("State(%d) = %q, want %q", s, s.String(), want[s])
		}
	}
	if State(200).String() != "unknown" {
		t.Error("out-of-range state must not alias a real name")
	}
}

func TestBackoff(t *testing.T) {
	const base, maxB, reset = 500 * time.Millisecond, 30 * time.Second, 60 * time.Second
	var got []time.Duration
	d := time.Duration(0)
	for range 9 {
		d = nextBackoff(d, base, maxB, time.Second, reset)
		got = append(got, d)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoff sequence = %v, want %v", got, want)
		}
	}
	if d := nextBackoff(30*time.Second, base, maxB, 61*time.Second, reset); d != base {
		t.Errorf("after a healthy run the delay must reset to %v, got %v", base, d)
	}
}

const chainYAML = `
shutdown_timeout: 30s
processes:
  db:
    command: [db]
  app:
    command: [app]
    depends_on: [db]
  web:
    command: [web]
    depends_on: {app: started}
`

func TestStartOrderAndReverseTeardown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, chainYAML, map[string]script{
			"db": {stopDelay: 100 * time.Millisecond}, "app": {stopDelay: 100 * time.Millisecond}, "web": {stopDelay: 100 * time.Millisecond},
		})
		synctest.Wait()
		h.mustHave("0s start db", "0s start app", "0s start web")
		if !(h.index("start db") < h.index("start app") && h.index("start app") < h.index("start web")) {
			t.Errorf("start order wrong: %v", h.f.events())
		}
		if snap := h.sup.Snapshot(); !snap.Ready || snap.Phase != "running" {
			t.Errorf("snapshot = %+v, want ready and running", snap)
		}
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		if o.ExitCode() != 0 || o.Reason != ReasonSignal {
			t.Errorf("outcome = %+v (exit %d), want a clean signal teardown, exit 0", o, o.ExitCode())
		}
		h.mustHave("1s signal web TERM", "1.1s signal app TERM", "1.2s signal db TERM", "1.3s exit db 143")
	})
}

func TestParallelBranchesStopTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  db: {command: [db]}
  a: {command: [a], depends_on: [db]}
  b: {command: [b], depends_on: [db]}
  c: {command: [c], depends_on: [a, b]}
`, map[string]script{
			"db": {stopDelay: 10 * time.Millisecond}, "a": {stopDelay: 100 * time.Millisecond},
			"b": {stopDelay: 300 * time.Millisecond}, "c": {stopDelay: 50 * time.Millisecond},
		})
		synctest.Wait()
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		// c first; a and b together once c exited; db only after the slower of a and b.
		h.mustHave("0s signal c TERM", "50ms signal a TERM", "50ms signal b TERM", "350ms signal db TERM", "360ms exit db 143")
	})
}

func TestCompletedGatesDependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  init: {command: [init], type: oneshot}
  app:
    command: [app]
    depends_on: {init: completed}
`, map[string]script{"init": {exitAfter: 1500 * time.Millisecond}})
		synctest.Wait()
		if h.has("0s start app") {
			t.Fatal("app started before init completed")
		}
		snap := h.sup.Snapshot()
		if got := snap.Processes[0]; got.Name != "app" || got.State != "pending" || len(got.WaitingFor) != 1 || got.WaitingFor[0] != "init: completed" {
			t.Errorf("pending app snapshot = %+v", got)
		}
		time.Sleep(2 * time.Second)
		h.mustHave("1.5s exit init 0", "1.5s start app")
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.ExitCode() != 0 {
			t.Errorf("exit %d", o.ExitCode())
		}
	})
}

func TestReadyHookGatesDependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  db:
    command: [db]
    ready: {log: "ready"}
  app: {command: [app], depends_on: [db]}
`, map[string]script{"db": {readyAfter: 700 * time.Millisecond}})
		synctest.Wait()
		if s := h.sup.Snapshot(); s.Ready || s.Processes[1].State != "starting" {
			t.Errorf("before ready: %+v", s)
		}
		time.Sleep(time.Second)
		h.mustHave("700ms start app")
		if s := h.sup.Snapshot(); !s.Ready || s.Processes[1].StartDuration != 700*time.Millisecond {
			t.Errorf("after ready: %+v", s)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestIgnoringTermIsKilledAtStopTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  stubborn:
    command: [x]
    stop: {timeout: 2s}
`, map[string]script{"stubborn": {ignoreTerm: true}})
		synctest.Wait()
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		h.mustHave("0s signal stubborn TERM", "2s signal stubborn KILL", "2s exit stubborn 137")
		if !o.Killed || o.ExitCode() != 1 {
			t.Errorf("outcome %+v exit %d, want killed and exit 1", o, o.ExitCode())
		}
	})
}

func TestShutdownTimeoutCapsChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
shutdown_timeout: 5s
processes:
  a: {command: [a], stop: {timeout: 10s}}
  b: {command: [b], depends_on: [a], stop: {timeout: 10s}}
  c: {command: [c], depends_on: [b], stop: {timeout: 10s}}
`, map[string]script{"a": {ignoreTerm: true}, "b": {ignoreTerm: true}, "c": {stopDelay: 4 * time.Second}})
		synctest.Wait()
		t0 := time.Now()
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		if d := time.Since(t0); d != 5*time.Second {
			t.Errorf("teardown took %v, want exactly the 5s shutdown_timeout", d)
		}
		h.mustHave("4s exit c 143", "4s signal b TERM", "5s signal b KILL", "5s signal a KILL")
		h.mustNotHaveSuffix("signal a TERM") // at the deadline everything left is killed outright
		if o.ExitCode() != 1 {
			t.Errorf("exit %d, want 1 (SIGKILL was needed)", o.ExitCode())
		}
	})
}

func TestSecondSignalKillsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [a], stop: {timeout: 10s}}
  b: {command: [b], depends_on: [a], stop: {timeout: 10s}}
`, map[string]script{"a": {ignoreTerm: true}, "b": {ignoreTerm: true}})
		synctest.Wait()
		h.sigs <- syscall.SIGINT
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGINT
		h.wait(time.Minute)
		h.mustHave("0s signal b TERM", "1s signal b KILL", "1s signal a KILL")
		h.mustNotHaveSuffix("signal a TERM")
	})
}

func TestJobSuccessEndsRunAfterwardsSidecarsStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  shipper: {command: [s]}
  test:
    command: [t]
    type: job
    depends_on: [shipper]
`, map[string]script{"test": {exitAfter: 3 * time.Second}, "shipper": {stopDelay: 200 * time.Millisecond}})
		o := h.wait(time.Minute)
		if o.Reason != ReasonJobsDone || o.ExitCode() != 0 {
			t.Errorf("outcome %+v exit %d", o, o.ExitCode())
		}
		h.mustHave("3s exit test 0", "3s signal shipper TERM", "3.2s exit shipper 143")
	})
}

func TestFailedJobCodeIsPropagated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  shipper: {command: [s]}
  test: {command: [t], type: job, depends_on: [shipper]}
`, map[string]script{"test": {exitAfter: time.Second, exitCodes: []int{3}}})
		o := h.wait(time.Minute)
		if o.Reason != ReasonFatal || o.Process != "test" || o.ExitCode() != 3 {
			t.Errorf("outcome %+v exit %d, want job test's code 3", o, o.ExitCode())
		}
		if h.index("exit test 3") > h.index("signal shipper TERM") {
			t.Errorf("sidecar stopped before the job ended: %v", h.f.events())
		}
	})
}

func TestPolledReadinessGates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  web:
    command: [w]
    ready: {http: "http://127.0.0.1:1/", start_interval: 100ms}
  app: {command: [a], depends_on: [web]}
`, nil, map[string]func(int) health.Result{
			"web/ready": func(n int) health.Result { return health.Result{OK: n >= 5} },
		})
		time.Sleep(2 * time.Second)
		h.mustHave("400ms start app")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestForwardsUSR1AndIgnoresHUP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [a]}
  b: {command: [b]}
`, nil)
		synctest.Wait()
		h.sigs <- syscall.SIGUSR1
		h.sigs <- syscall.SIGHUP
		synctest.Wait()
		h.mustHave("0s signal a USR1", "0s signal b USR1")
		if h.sup.Snapshot().Phase == "stopping" {
			t.Fatal("SIGHUP must not start a teardown")
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestReadyzTurns503BeforeFirstStopSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(nil)
		sup, _ := New(Options{Config: parse(t, chainYAML), Launcher: f})
		watchTransitions(t, sup)
		seen := make(chan bool, 1)
		f.onSignal = func() {
			select {
			case seen <- sup.Snapshot().Ready:
			default:
			}
		}
		sigs := make(chan os.Signal, 1)
		done := make(chan Outcome)
		go func() { done <- sup.Run(context.Background(), sigs) }()
		synctest.Wait()
		if !sup.Snapshot().Ready {
			t.Fatal("not ready before teardown")
		}
		sigs <- syscall.SIGTERM
		<-done
		if <-seen {
			t.Error("snapshot still ready when the first stop signal was sent")
		}
	})
}

func TestCancelKillsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, chainYAML, map[string]script{"db": {ignoreTerm: true}})
		synctest.Wait()
		h.stop()
		o := h.wait(time.Minute)
		if o.Reason != ReasonCancelled {
			t.Errorf("outcome %+v", o)
		}
		h.mustHave("0s signal db KILL", "0s signal app KILL", "0s signal web KILL")
	})
}

func TestFailedReadinessAttemptIsVisibleWhileStarting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWithChecks(t, `
processes:
  web:
    command: [w]
    ready: {http: "http://127.0.0.1:1/", start_interval: 100ms}
`, nil, map[string]func(int) health.Result{
			"web/ready": func(n int) health.Result { return health.Result{OK: false, Detail: "HTTP 500"} },
		})
		time.Sleep(time.Second)
		if p := h.sup.Snapshot().Processes[0]; p.State != "starting" || p.Reason != "not ready yet: HTTP 500" {
			t.Errorf("snapshot %+v, want starting with the last failure as reason", p)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
