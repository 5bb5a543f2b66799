// Reloads as operator commands: only what changed is touched, SIGHUP storms
// coalesce, removed chains carry their dependents.

package supervisor

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

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

		dry := h.do("reload", Request{DryRun: true})
		if !dry.OK || dry.Generation != 1 || strings.Join(dry.Plan, "\n") != "stop other: removed from the config\nstart extra: added to the config\nrestart web: command changed\nunchanged: 2 process(es) left running as they are" {
			t.Fatalf("dry run: %+v", dry)
		}
		if h.index("signal") >= 0 {
			t.Fatal("dry run acted")
		}
		res := h.do("reload", Request{})
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
		res = h.do("reload", Request{})
		if res.OK || len(res.Errors) != 2 || !strings.Contains(res.Errors[0], "test.yaml:2:") {
			t.Fatalf("invalid reload: %+v", res)
		}
		if g := h.sup.Snapshot().Generation; g != 2 {
			t.Errorf("generation after invalid reload %d", g)
		}
		// Removing a process others still depend on is invalid too.
		removeDep := "processes:\n  app: {command: [app], depends_on: [db]}\n  web: {command: [web, -v], depends_on: [app]}\n  extra: {command: [x], depends_on: [db]}\n"
		h.next.Store(&removeDep)
		if res := h.do("reload", Request{}); res.OK || !strings.Contains(strings.Join(res.Errors, "\n"), `unknown process "db"`) {
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
		res := h.do("reload", Request{})
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
