package supervisor

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"

	"github.com/podvisor/podvisor/internal/config"
)

// Issue 22 item 3: a renamed process (removed under its old name, added
// under the new one) must not start before the old incarnation has exited,
// or the new one finds its port taken and its readiness check answered by
// the old process. Every start of a reload waits for that reload's stops.
func TestReloadStartsWaitForItsStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const base = `
processes:
  db: {command: [db]}
  web: {command: [web], depends_on: [db]}
  api: {command: [api]}
`
		h := startOps(t, base, map[string]script{"web": {stopDelay: time.Second}})
		synctest.Wait()
		next := `
processes:
  db: {command: [db]}
  web2: {command: [web], depends_on: [db]}
  api: {command: [api, -v]}
`
		h.next.Store(&next)
		res := h.do("reload", Request{})
		if !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		h.mustHave("0s signal web TERM", "1s exit web 143", "1s start web2", "0s signal api TERM", "0s exit api 143", "1s start api")
		exit, start := h.index("exit web 143"), h.index("start web2")
		if exit < 0 || start < 0 || start < exit {
			t.Fatalf("web2 started before web exited:\n%s", strings.Join(h.f.events(), "\n"))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 5: two reloads that race apply in the order their files
// were read. The first reload reads v1 and is slow to parse it; meanwhile
// the file becomes v2 and a second reload begins. The last config applied
// must be v2, whatever order the parses finish in.
func TestRacingReloadsApplyInReadOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v0 := "processes:\n  a: {command: [a]}\n"
		v1 := "processes:\n  a: {command: [a, v1]}\n"
		v2 := "processes:\n  a: {command: [a, v2]}\n"
		f := newFake(nil)
		var file atomic.Pointer[string]
		file.Store(&v1)
		var loads atomic.Int32
		slow := make(chan struct{})
		load := func() (*config.Config, error) {
			data := *file.Load() // read the file...
			if loads.Add(1) == 1 {
				<-slow // ...then parse it slowly
			}
			return config.Parse("test.yaml", []byte(data), nil)
		}
		sup, err := New(Options{Config: parse(t, v0), Launcher: f, Load: load})
		watchTransitions(t, sup)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := make(chan Outcome, 1)
		sigs := make(chan os.Signal, 1)
		go func() { out <- sup.Run(ctx, sigs) }()
		synctest.Wait()

		done := make(chan Response, 2)
		go func() { done <- sup.Command(ctx, "reload", Request{}) }()
		synctest.Wait() // the first reload has read v1 and is parsing it
		file.Store(&v2)
		go func() { done <- sup.Command(ctx, "reload", Request{}) }()
		synctest.Wait()
		close(slow)
		<-done
		<-done
		synctest.Wait()
		if got := strings.Join(sup.cfg.Processes["a"].Command, " "); got != "a v2" {
			t.Fatalf("after two racing reloads the config in effect is %q, want the last file read (a v2)", got)
		}
		sigs <- syscall.SIGTERM
		<-out
	})
}

// Issue 22 item 4: a completed oneshot that a reload turns into a service
// is started as one: it was left "completed", never started, /readyz 503
// for good and podvisor start refused.
func TestReloadCompletedOneshotToService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, "processes:\n  init: {command: [init], type: oneshot}\n  web: {command: [web]}\n",
			map[string]script{"init": {exitAfter: time.Second, firstOnly: true}})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if st, _, _ := h.state("init"); st != "completed" {
			t.Fatalf("init: %s, want completed", st)
		}
		next := "processes:\n  init: {command: [init], type: service}\n  web: {command: [web]}\n"
		h.next.Store(&next)
		dry := h.do("reload", Request{DryRun: true})
		if !strings.Contains(strings.Join(dry.Plan, "\n"), "restart init: type changed") {
			t.Errorf("plan: %q", dry.Plan)
		}
		res := h.do("reload", Request{})
		if !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		if st, _, pid := h.state("init"); st != "running" || pid == 0 {
			t.Fatalf("init after the reload: %s pid %d, want running", st, pid)
		}
		if !h.sup.Snapshot().Ready {
			t.Fatalf("not ready: %v", h.sup.Snapshot().NotReady)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 9: podvisor stop X, then podvisor restart X while X's
// stop.command runs: X stops, then starts again at once (in the same step),
// and the stop's client must be answered then, not at its timeout.
func TestStopOvertakenByRestartAnswersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  a: {command: [a], stop: {command: [hook], timeout: 10s}}
`, map[string]script{"a": {hook: 3 * time.Second}})
		synctest.Wait()
		t0 := time.Now()
		done := make(chan Response, 1)
		go func() { done <- h.do("stop", names("a")) }()
		synctest.Wait() // the hook runs
		if res := h.do("restart", names("a")); !res.OK {
			t.Fatalf("restart: %s", resultText(res))
		}
		select {
		case r := <-done:
			if took := time.Since(t0); took > 3*time.Second {
				t.Fatalf("stop answered after %v (%s %s), want once a stopped (3s)", took, r.Error, resultText(r))
			}
			if r.OK || !strings.Contains(resultText(r), "started again") {
				t.Errorf("stop overtaken by restart: %s %s", r.Error, resultText(r))
			}
		case <-time.After(time.Minute):
			t.Fatal("the stop client still waits a minute after the restart")
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 13: a dependent restarted through restart: true counts the
// restart, like a policy or podvisor restart.
func TestRestartTrueDependentCountsRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  cache: {command: [cache]}
  app: {command: [app], depends_on: {cache: {condition: started, restart: true}}}
  idle: {command: [idle], depends_on: {app: {condition: started, restart: true}}}
`, map[string]script{"cache": {exitAfter: time.Second, exitCodes: []int{1, 0}, firstOnly: true}})
		time.Sleep(time.Minute)
		synctest.Wait()
		restarts := map[string]int{}
		for _, p := range h.sup.Snapshot().Processes {
			restarts[p.Name] = p.Restarts
		}
		if restarts["cache"] != 1 || restarts["app"] != 1 || restarts["idle"] != 1 {
			t.Errorf("restarts %v, want 1 each (cache crashed; app and idle followed it)", restarts)
		}
		if res := h.do("restart", names("cache")); !res.OK {
			t.Fatalf("restart: %s", resultText(res))
		}
		for _, p := range h.sup.Snapshot().Processes {
			restarts[p.Name] = p.Restarts
		}
		if restarts["cache"] != 2 || restarts["app"] != 2 || restarts["idle"] != 2 {
			t.Errorf("restarts %v after podvisor restart cache, want 2 each", restarts)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Restarts that followed a restart: true dependency count in restarts but
// not against the follower's own restart.limit.
func TestFollowedRestartsNotAgainstLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  cache: {command: [cache]}
  app:
    command: [app]
    depends_on: {cache: {condition: started, restart: true}}
    restart: {policy: on-failure, limit: 1}
`, map[string]script{"app": {exitAfter: 30 * time.Second, exitCodes: []int{0, 0, 1, 0}}})
		synctest.Wait()
		for range 2 { // app follows cache twice
			if res := h.do("restart", names("cache")); !res.OK {
				t.Fatalf("restart: %s", resultText(res))
			}
		}
		time.Sleep(time.Minute) // app's own first failure: restarted (limit 1)
		synctest.Wait()
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start app"); n != 4 {
			t.Fatalf("app started %d times, want 4:\n%s", n, strings.Join(h.f.events(), "\n"))
		}
		select {
		case o := <-h.out:
			t.Fatalf("podvisor ended: %+v (followed restarts counted against app's limit)", o)
		default:
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 14: a reload refused over the control socket is logged,
// with every error, as a refused SIGHUP reload is.
func TestRefusedReloadIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testharness.Buffer
		f := newFake(map[string]script{"web": {stopDelay: 5 * time.Second}})
		next := "processes:\n  db: {command: [db], type: servce}\n  app: {command: [app], depends_on: [dbb]}\n"
		load := func() (*config.Config, error) { return config.Parse("test.yaml", []byte(next), nil) }
		sup, err := New(Options{Config: parse(t, chain3), Launcher: f, Load: load,
			Log: slog.New(slog.NewTextHandler(&buf, nil))})
		watchTransitions(t, sup)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &opsHarness{harness: &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		synctest.Wait()
		if res := h.do("reload", Request{}); res.OK || len(res.Errors) != 2 {
			t.Fatalf("reload: %+v", res)
		}
		out := buf.String()
		if !strings.Contains(out, "reload (podvisor reload) refused") || !strings.Contains(out, "test.yaml:2:") || !strings.Contains(out, `unknown process \"dbb\"`) {
			t.Errorf("podvisor's log after a refused reload:\n%s", out)
		}
		h.sigs <- syscall.SIGTERM // web takes 5 s to stop
		synctest.Wait()
		if res := h.do("reload", Request{}); res.OK {
			t.Fatalf("reload during teardown: %+v", res)
		}
		if out := buf.String(); !strings.Contains(out, "refused during teardown") {
			t.Errorf("podvisor's log after a reload refused during teardown:\n%s", out)
		}
		h.wait(time.Minute)
	})
}

// A restart planned by a reload for a process in backoff waits for the
// reload's stops past its backoff's end without the loop spinning on that
// past instant (the invariant test found it).
func TestReloadRestartInBackoffWaitsForStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const base = `
processes:
  web: {command: [web]}
  api: {command: [api], restart: {policy: always, backoff: 5s}}
`
		f := newFake(map[string]script{"web": {stopDelay: 10 * time.Second}, "api": {exitAfter: time.Second, firstOnly: true}})
		next := strings.Replace(strings.Replace(base, "web:", "web2:", 1), "[api]", "[api, -v]", 1)
		load := func() (*config.Config, error) { return config.Parse("test.yaml", []byte(next), nil) }
		sup, err := New(Options{Config: parse(t, base), Launcher: f, Load: load})
		watchTransitions(t, sup)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var at time.Time
		steps := 0
		sup.afterStep = func(now time.Time) {
			if now.Equal(at) {
				if steps++; steps == 10000 {
					t.Error("the loop spins: 10000 steps at one instant")
					cancel()
				}
			} else {
				at, steps = now, 0
			}
		}
		h := &opsHarness{harness: &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		time.Sleep(2 * time.Second) // api exited at 1s: in backoff until 6s
		synctest.Wait()
		if st, _, _ := h.state("api"); st != "backoff" {
			t.Fatalf("api %s, want backoff", st)
		}
		if res := h.do("reload", Request{}); !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		h.mustHave("12s exit web 143", "12s start web2", "12s start api")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
