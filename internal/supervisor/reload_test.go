package supervisor

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

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
