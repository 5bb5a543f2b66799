package supervisor

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

const subsetYAML = `
processes:
  db: {command: [db]}
  cache: {command: [cache]}
  api: {command: [api], depends_on: [db, cache]}
  web: {command: [web], depends_on: [api]}
  batch: {command: [batch], type: job}
  seed: {command: [seed], type: job, depends_on: [db]}
`

// outsideOf leaves names out of every config it is given.
func outsideOf(names ...string) func(*Options) {
	return func(o *Options) { o.Outside = func(*config.Config) []string { return names } }
}

func TestOutsideNeverStartsAndDoesNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A run of db and seed only (podvisor run -c procs.yaml seed).
		h := startOpsWith(t, subsetYAML, nil, outsideOf("cache", "api", "web", "batch"))
		synctest.Wait()
		if !h.sup.Snapshot().Ready {
			t.Errorf("not ready with the outside processes stopped: %v", h.sup.Snapshot().NotReady)
		}
		for _, n := range []string{"cache", "api", "web", "batch"} {
			if st, why, _ := h.state(n); st != "stopped" || why != reasonOutside {
				t.Errorf("%s: %s (%s), want stopped (%s)", n, st, why, reasonOutside)
			}
		}
		ev := strings.Join(h.f.events(), "\n")
		if strings.Contains(ev, "start cache") || strings.Contains(ev, "start web") || strings.Contains(ev, "start batch") {
			t.Errorf("an outside process started:\n%s", ev)
		}
		// batch, a job outside the set, does not keep the run going: the
		// set's only job completing ends it... but db is a service, so the
		// run goes on; stop it.
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestOutsideJobDoesNotHoldTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOpsWith(t, "processes:\n  a: {command: [a], type: job}\n  b: {command: [b], type: job}\n",
			map[string]script{"a": {exitAfter: time.Second}}, outsideOf("b"))
		out := h.wait(time.Minute)
		if out.Reason != ReasonJobsDone {
			t.Errorf("outcome %+v, want all jobs completed (b is outside the run)", out)
		}
	})
}

func TestStartOutsideBringsItsOutsideDependencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// --profile-like run: db only; web needs api, which needs db and cache.
		h := startOpsWith(t, subsetYAML, nil, outsideOf("cache", "api", "web", "batch", "seed"))
		synctest.Wait()
		res := h.do("start", names("web"))
		if !res.OK {
			t.Fatalf("start web: %s", resultText(res))
		}
		txt := resultText(res)
		for _, want := range []string{"web ok", "api ok", "cache ok"} {
			if !strings.Contains(txt, want) {
				t.Errorf("results lack %q:\n%s", want, txt)
			}
		}
		ev := h.f.events()
		idx := func(s string) int {
			for i, e := range ev {
				if strings.HasSuffix(e, s) {
					return i
				}
			}
			return -1
		}
		if c, a, w := idx("start cache"), idx("start api"), idx("start web"); !(c >= 0 && c < a && a < w) {
			t.Errorf("start order cache %d api %d web %d:\n%s", c, a, w, strings.Join(ev, "\n"))
		}
		if idx("start batch") >= 0 || idx("start seed") >= 0 {
			t.Errorf("start web started more than it needs:\n%s", strings.Join(ev, "\n"))
		}
		if st, _, _ := h.state("seed"); st != "stopped" {
			t.Errorf("seed: %s", st)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestReloadKeepsAddedOutsideProcessesDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOpsWith(t, "processes:\n  a: {command: [a]}\n", nil, outsideOf("extra"))
		synctest.Wait()
		next := "processes:\n  a: {command: [a]}\n  extra: {command: [extra]}\n  more: {command: [more]}\n"
		h.next.Store(&next)
		res := h.do("reload", Request{})
		if !res.OK {
			t.Fatalf("reload: %+v", res)
		}
		synctest.Wait()
		if st, why, _ := h.state("extra"); st != "stopped" || why != reasonOutside {
			t.Errorf("extra: %s (%s), want stopped outside", st, why)
		}
		if st, _, _ := h.state("more"); st != "running" {
			t.Errorf("more: %s, want running (selected)", st)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
