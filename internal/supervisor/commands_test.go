package supervisor

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
)

// startOps is start with a reloadable config: load returns whatever next
// holds (set it before a reload).
type opsHarness struct {
	*harness
	next  atomic.Pointer[string]
	loads atomic.Int32
}

func startOps(t *testing.T, yml string, scripts map[string]script) *opsHarness {
	t.Helper()
	f := newFake(scripts)
	oh := &opsHarness{}
	oh.next.Store(&yml)
	load := func() (*config.Config, error) {
		oh.loads.Add(1)
		return config.Parse("test.yaml", []byte(*oh.next.Load()), nil)
	}
	sup, err := New(Options{Config: parse(t, yml), Launcher: f, Checkers: f.checkers, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	oh.harness = &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 16), out: make(chan Outcome, 1), stop: cancel}
	go func() { oh.out <- sup.Run(ctx, oh.sigs) }()
	t.Cleanup(cancel)
	return oh
}

func (h *opsHarness) do(op string, req control.Request) control.Response {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return h.sup.Command(ctx, op, req)
}

func names(n ...string) control.Request { return control.Request{Names: n} }

func resultText(res control.Response) string {
	var b []string
	for _, r := range res.Results {
		ok := "ok"
		if !r.OK {
			ok = "FAIL"
		}
		b = append(b, r.Name+" "+ok+" "+r.Message)
	}
	return strings.Join(b, "\n")
}

func (h *opsHarness) state(name string) (string, string, int) {
	for _, p := range h.sup.Snapshot().Processes {
		if p.Name == name {
			return p.State, p.Reason, p.Pid
		}
	}
	return "absent", "", 0
}

const chain3 = `
processes:
  db: {command: [db]}
  app: {command: [app], depends_on: [db]}
  web: {command: [web], depends_on: [app]}
  other: {command: [other]}
`

func TestStopTakesDependentsDownAndKeepsThemDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, map[string]script{"web": {stopDelay: time.Second}, "app": {stopDelay: time.Second}})
		time.Sleep(time.Second)
		res := h.do("stop", names("db"))
		if !res.OK || len(res.Results) != 3 {
			t.Fatalf("stop: %+v", res)
		}
		if !strings.Contains(resultText(res), "web ok stopped with db") {
			t.Errorf("results:\n%s", resultText(res))
		}
		// Dependents first, in reverse order: web, then app, then db.
		if w, a, d := h.index("signal web TERM"), h.index("signal app TERM"), h.index("signal db TERM"); !(w >= 0 && w < a && a < d) {
			t.Errorf("stop order web %d app %d db %d:\n%s", w, a, d, strings.Join(h.f.events(), "\n"))
		}
		time.Sleep(5 * time.Minute) // no policy restart brings them back
		for _, n := range []string{"db", "app", "web"} {
			if st, why, _ := h.state(n); st != "stopped" || why != reasonHeld {
				t.Errorf("%s: %s (%s), want stopped (%s)", n, st, why, reasonHeld)
			}
		}
		if st, _, _ := h.state("other"); st != "running" {
			t.Errorf("other: %s", st)
		}
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start db"); n != 1 {
			t.Errorf("db started %d times", n)
		}
		// start brings back what stop took down, in dependency order.
		res = h.do("start", names("db"))
		if !res.OK || len(res.Results) != 3 {
			t.Fatalf("start: %+v", res)
		}
		if ev := h.f.events(); !(strings.HasSuffix(ev[len(ev)-3], "start db") && strings.HasSuffix(ev[len(ev)-2], "start app") && strings.HasSuffix(ev[len(ev)-1], "start web")) {
			t.Errorf("start order:\n%s", strings.Join(ev, "\n"))
		}
		for _, n := range []string{"db", "app", "web"} {
			if st, _, _ := h.state(n); st != "running" {
				t.Errorf("%s after start: %s", n, st)
			}
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestStartRefusedWhileDependencyStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, nil)
		synctest.Wait()
		if res := h.do("stop", names("db")); !res.OK {
			t.Fatalf("stop: %+v", res)
		}
		res := h.do("start", names("app"))
		if res.OK || !strings.Contains(resultText(res), "dependency db is stopped (stopped by podvisor stop); start it first: podvisor start db") {
			t.Fatalf("start app with db stopped: %+v", res)
		}
		if st, _, _ := h.state("app"); st != "stopped" {
			t.Fatalf("refused start changed app to %s", st)
		}
		// Both at once is fine.
		if res := h.do("start", names("app", "db")); !res.OK {
			t.Fatalf("start app db: %s", resultText(res))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestRestartCarriesRestartTrueDependents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  cache: {command: [c]}
  app: {command: [a], depends_on: {cache: {condition: started, restart: true}}}
  worker: {command: [w], depends_on: {app: {condition: started, restart: true}}}
  other: {command: [o], depends_on: [cache]}
`, map[string]script{"worker": {stopDelay: time.Second}, "app": {stopDelay: time.Second}})
		synctest.Wait()
		_, _, oldPid := h.state("cache")
		res := h.do("restart", names("cache"))
		if !res.OK || len(res.Results) != 3 {
			t.Fatalf("restart: %s %+v", resultText(res), res)
		}
		_, _, newPid := h.state("cache")
		if newPid == oldPid || newPid == 0 {
			t.Fatalf("cache pid %d -> %d", oldPid, newPid)
		}
		h.mustHave("0s signal worker TERM", "1s signal app TERM", "2s signal cache TERM", "2s start cache", "2s start app", "2s start worker")
		h.mustNotHaveSuffix("signal other TERM")
		if p := h.sup.Snapshot().Processes; p[1].Name != "cache" || p[1].Restarts != 1 {
			t.Errorf("cache restarts: %+v", p[1])
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestRestartDuringBackoffStartsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  flaky: {command: [f], restart: {policy: always, backoff: 1m, max_backoff: 1m}}
`, map[string]script{"flaky": {exitAfter: time.Second, exitCodes: []int{1}, firstOnly: true}})
		time.Sleep(2 * time.Second)
		if st, _, _ := h.state("flaky"); st != "backoff" {
			t.Fatalf("state %s, want backoff", st)
		}
		res := h.do("restart", names("flaky"))
		if !res.OK {
			t.Fatalf("restart: %s", resultText(res))
		}
		h.mustHave("2s start flaky")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestCommandRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  migrate: {command: [m], type: oneshot}
  web: {command: [w], depends_on: {migrate: completed}}
`, map[string]script{"migrate": {exitAfter: time.Second}, "web": {stopDelay: time.Minute}})
		time.Sleep(2 * time.Second)
		res := h.do("stop", names("webb", "web", "nope"))
		if res.OK || res.Error != `unknown process "webb" (did you mean "web"?); unknown process "nope"` {
			t.Fatalf("unknown names: %+v", res)
		}
		if h.index("signal web") >= 0 {
			t.Fatal("a refused command acted")
		}
		res = h.do("stop", names("migrate"))
		if res.OK || !strings.Contains(resultText(res), "has completed: nothing to stop") {
			t.Fatalf("stop completed oneshot: %+v", res)
		}
		res = h.do("signal", control.Request{Names: []string{"web"}, Signal: "usr1"})
		if !res.OK || !strings.Contains(resultText(res), "sent SIGUSR1 to process group") {
			t.Fatalf("signal: %+v", res)
		}
		h.mustHave("2s signal web USR1")
		// During teardown, every command is refused.
		h.sigs <- syscall.SIGTERM
		synctest.Wait()
		for _, op := range []string{"restart", "stop", "start"} {
			if res := h.do(op, names("web")); res.OK || !strings.Contains(res.Error, "refused during teardown") {
				t.Errorf("%s during teardown: %+v", op, res)
			}
		}
		if res := h.do("reload", control.Request{}); res.OK || !strings.Contains(res.Error, "refused during teardown") {
			t.Errorf("reload during teardown: %+v", res)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// A client that gives up mid-command leaves a command that still completes.
func TestAbandonedCommandCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, map[string]script{"db": {stopDelay: 10 * time.Second}})
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		res := h.sup.Command(ctx, "stop", names("db"))
		cancel()
		if res.OK || !strings.Contains(res.Error, "timed out") || !strings.Contains(resultText(res), "not done yet: stopping") {
			t.Fatalf("abandoned: %+v", res)
		}
		time.Sleep(time.Minute)
		for _, n := range []string{"db", "app", "web"} {
			if st, why, _ := h.state(n); st != "stopped" || why != reasonHeld {
				t.Errorf("%s: %s (%s)", n, st, why)
			}
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Two clients at once: each gets its own answer and the end state is what
// the later command asked for.
func TestTwoClientsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, map[string]script{"app": {stopDelay: time.Second}})
		synctest.Wait()
		var wg sync.WaitGroup
		var r1, r2 control.Response
		wg.Go(func() { r1 = h.do("restart", names("web")) })
		wg.Go(func() { r2 = h.do("restart", names("app", "other")) })
		wg.Wait()
		if !r1.OK || !r2.OK {
			t.Fatalf("answers:\n%s\n%s", resultText(r1), resultText(r2))
		}
		for _, n := range []string{"db", "app", "web", "other"} {
			if st, _, _ := h.state(n); st != "running" {
				t.Errorf("%s: %s", n, st)
			}
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestReloadTouchesOnlyWhatChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, nil)
		synctest.Wait()
		pids := map[string]int{}
		for _, n := range []string{"db", "app", "web", "other"} {
			_, _, pids[n] = h.state(n)
		}
		next := strings.Replace(chain3, "command: [web]", "command: [web, -v]", 1)
		next = strings.Replace(next, "  other: {command: [other]}\n", "  extra: {command: [x], depends_on: [db]}\n", 1)
		h.next.Store(&next)

		dry := h.do("reload", control.Request{DryRun: true})
		if !dry.OK || dry.Generation != 1 || strings.Join(dry.Plan, "\n") != "stop other: removed from the config\nstart extra: added to the config\nrestart web: command changed\nunchanged: 2 process(es) left running as they are" {
			t.Fatalf("dry run: %+v", dry)
		}
		if h.index("signal") >= 0 {
			t.Fatal("dry run acted")
		}
		res := h.do("reload", control.Request{})
		if !res.OK || res.Generation != 2 {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		for _, n := range []string{"db", "app"} {
			if _, _, pid := h.state(n); pid != pids[n] {
				t.Errorf("%s pid %d -> %d: an unchanged process was touched", n, pids[n], pid)
			}
		}
		if _, _, pid := h.state("web"); pid == pids["web"] || pid == 0 {
			t.Errorf("web not restarted (pid %d)", pid)
		}
		if st, _, _ := h.state("other"); st != "absent" {
			t.Errorf("removed process still shown: %s", st)
		}
		if st, _, _ := h.state("extra"); st != "running" {
			t.Errorf("added process: %s", st)
		}
		if g := h.sup.Snapshot().Generation; g != 2 {
			t.Errorf("generation %d", g)
		}
		h.mustNotHaveSuffix("signal db TERM")
		h.mustNotHaveSuffix("signal app TERM")

		// An invalid config changes nothing and returns every error.
		bad := "processes:\n  db: {command: [db], type: servce}\n  app: {command: [app], depends_on: [dbb]}\n"
		h.next.Store(&bad)
		res = h.do("reload", control.Request{})
		if res.OK || len(res.Errors) != 2 || !strings.Contains(res.Errors[0], "test.yaml:2:") {
			t.Fatalf("invalid reload: %+v", res)
		}
		if g := h.sup.Snapshot().Generation; g != 2 {
			t.Errorf("generation after invalid reload %d", g)
		}
		// Removing a process others still depend on is invalid too.
		removeDep := "processes:\n  app: {command: [app], depends_on: [db]}\n  web: {command: [web, -v], depends_on: [app]}\n  extra: {command: [x], depends_on: [db]}\n"
		h.next.Store(&removeDep)
		if res := h.do("reload", control.Request{}); res.OK || !strings.Contains(strings.Join(res.Errors, "\n"), `unknown process "db"`) {
			t.Fatalf("removing a dependency: %+v", res)
		}
		if st, _, _ := h.state("db"); st != "running" {
			t.Fatalf("db after refused reload: %s", st)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestSighupStormIsCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, nil)
		synctest.Wait()
		next := strings.Replace(chain3, "command: [web]", "command: [web, -v]", 1)
		h.next.Store(&next)
		for range 10 {
			h.sigs <- syscall.SIGHUP
		}
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if n := h.loads.Load(); n != 1 {
			t.Fatalf("%d loads for a burst of 10 SIGHUPs, want 1", n)
		}
		if g := h.sup.Snapshot().Generation; g != 2 {
			t.Fatalf("generation %d", g)
		}
		// A SIGHUP after the read began is not lost: it makes one more
		// (and one only, for two at once).
		h.sigs <- syscall.SIGHUP
		time.Sleep(hupSettle + time.Millisecond)
		h.sigs <- syscall.SIGHUP
		h.sigs <- syscall.SIGHUP
		time.Sleep(time.Second)
		synctest.Wait()
		if n := h.loads.Load(); n != 3 {
			t.Fatalf("%d loads, want 3", n)
		}
		// Only web restarted, once.
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start web"); n != 2 {
			t.Fatalf("web started %d times:\n%s", n, strings.Join(h.f.events(), "\n"))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

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

// Races the randomized invariant test found, kept as plain tests.

// start while the stop.command of a stop is still running: the process
// comes back once the old incarnation is gone, never two at once.
func TestStartDuringStopHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  a: {command: [a], stop: {command: [hook], timeout: 10s}}
`, map[string]script{"a": {hook: 3 * time.Second}})
		synctest.Wait()
		done := make(chan control.Response, 1)
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

// A reload that removes a chain stops it dependents first, and restarts a
// changed process with its restart: true dependents.
func TestReloadRemovesChainAndCarriesDependents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const base = `
processes:
  cache: {command: [cache]}
  app: {command: [app], depends_on: {cache: {condition: started, restart: true}}}
  old1: {command: [o1]}
  old2: {command: [o2], depends_on: [old1]}
`
		h := startOps(t, base, map[string]script{"old2": {stopDelay: 2 * time.Second}, "app": {stopDelay: time.Second}})
		synctest.Wait()
		next := "processes:\n  cache: {command: [cache, -v]}\n  app: {command: [app], depends_on: {cache: {condition: started, restart: true}}}\n"
		h.next.Store(&next)
		res := h.do("reload", control.Request{})
		if !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		h.mustHave("0s signal old2 TERM", "2s exit old2 143", "2s signal old1 TERM", "0s signal app TERM", "1s signal cache TERM", "2s start cache", "2s start app") // starts wait for the reload's stops
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start old"); n != 2 {
			t.Fatalf("removed processes started again:\n%s", strings.Join(h.f.events(), "\n"))
		}
		for _, n := range []string{"old1", "old2"} {
			if st, _, _ := h.state(n); st != "absent" {
				t.Errorf("%s still shown as %s", n, st)
			}
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
