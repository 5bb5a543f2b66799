package supervisor

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
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
		res := h.do("reload", control.Request{})
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
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := make(chan Outcome, 1)
		sigs := make(chan os.Signal, 1)
		go func() { out <- sup.Run(ctx, sigs) }()
		synctest.Wait()

		done := make(chan control.Response, 2)
		go func() { done <- sup.Command(ctx, "reload", control.Request{}) }()
		synctest.Wait() // the first reload has read v1 and is parsing it
		file.Store(&v2)
		go func() { done <- sup.Command(ctx, "reload", control.Request{}) }()
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
		dry := h.do("reload", control.Request{DryRun: true})
		if !strings.Contains(strings.Join(dry.Plan, "\n"), "restart init: type changed") {
			t.Errorf("plan: %q", dry.Plan)
		}
		res := h.do("reload", control.Request{})
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
