package supervisor

import (
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func resultNames(res Response) []string {
	var out []string
	for _, r := range res.Results {
		out = append(out, r.Name)
	}
	return out
}

// TestStopResultsInOrderOfOutcome: `podvisor stop db` prints one line per
// process in the order the processes stopped (dependents first), not in the
// order the command named them.
func TestStopResultsInOrderOfOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, chain3, map[string]script{
			"web": {stopDelay: time.Second}, "app": {stopDelay: time.Second}, "db": {stopDelay: time.Second},
		})
		time.Sleep(time.Second)
		res := h.do("stop", names("db"))
		if got, want := resultNames(res), []string{"web", "app", "db"}; !res.OK || !slices.Equal(got, want) {
			t.Errorf("stop db: results %q, want %q:\n%s", got, want, resultText(res))
		}
		res = h.do("start", names("db"))
		if got, want := resultNames(res), []string{"db", "app", "web"}; !res.OK || !slices.Equal(got, want) {
			t.Errorf("start db: results %q, want %q:\n%s", got, want, resultText(res))
		}
		// One already stopped (first: nothing to wait for), one stopped
		// now; web, stopped with app, is already down and left alone.
		if res := h.do("stop", names("app")); !res.OK {
			t.Fatalf("stop app: %s", resultText(res))
		}
		res = h.do("stop", names("app", "db"))
		if got, want := resultNames(res), []string{"app", "db"}; !res.OK || !slices.Equal(got, want) {
			t.Errorf("stop app db: results %q, want %q:\n%s", got, want, resultText(res))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
