package supervisor

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
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
	return startOpsWith(t, yml, scripts, nil)
}

// startOpsWith is startOps with more Options set by opt.
func startOpsWith(t *testing.T, yml string, scripts map[string]script, opt func(*Options)) *opsHarness {
	t.Helper()
	f := newFake(scripts)
	oh := &opsHarness{}
	oh.next.Store(&yml)
	load := func() (*config.Config, error) {
		oh.loads.Add(1)
		return config.Parse("test.yaml", []byte(*oh.next.Load()), nil)
	}
	o := Options{Config: parse(t, yml), Launcher: f, Checkers: f.checkers, Load: load}
	if opt != nil {
		opt(&o)
	}
	sup, err := New(o)
	watchTransitions(t, sup)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	oh.harness = &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 16), out: make(chan Outcome, 1), stop: cancel}
	go func() { oh.out <- sup.Run(ctx, oh.sigs) }()
	t.Cleanup(cancel)
	return oh
}

func (h *opsHarness) do(op string, req Request) Response {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return h.sup.Command(ctx, op, req)
}

func names(n ...string) Request { return Request{Names: n} }

func resultText(res Response) string {
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
		res = h.do("signal", Request{Names: []string{"web"}, Signal: "usr1"})
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
		if res := h.do("reload", Request{}); res.OK || !strings.Contains(res.Error, "refused during teardown") {
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
		var r1, r2 Response
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

// Races the randomized invariant test found, kept as plain tests.
