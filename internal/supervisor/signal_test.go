package supervisor

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// TestSignalNotRunningFails: `podvisor signal` on a process that is not
// running sends nothing and is a failure (exit 1), not a success; and a
// signal given by number is reported by its name, as one given by name is.
func TestSignalNotRunningFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  migrate: {command: [m], type: oneshot}
  web: {command: [w], depends_on: {migrate: completed}}
`, map[string]script{"migrate": {exitAfter: time.Second}, "web": {stopDelay: time.Hour}})
		time.Sleep(2 * time.Second)
		res := h.do("signal", Request{Names: []string{"migrate"}, Signal: "HUP"})
		if res.OK || !strings.Contains(resultText(res), "migrate FAIL not running (completed): no signal sent") {
			t.Errorf("signal to a completed oneshot: %+v", res)
		}
		for _, given := range []string{"1", "HUP", "sighup", "SIGHUP"} {
			res = h.do("signal", Request{Names: []string{"web"}, Signal: given})
			if !res.OK || !strings.Contains(resultText(res), "web ok sent SIGHUP to process group") {
				t.Errorf("signal web %s: %+v", given, res)
			}
		}
		res = h.do("signal", Request{Names: []string{"web"}, Signal: "10"})
		if !res.OK || !strings.Contains(resultText(res), "sent SIGUSR1 to") {
			t.Errorf("signal web 10: %+v", res)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
