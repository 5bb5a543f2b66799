package kube

import (
	"os"
	"testing"
	"time"
)

// afterPreStop counts ev's lines after the regular container's preStop
// began and before it ended.
func afterPreStop(l eventLog, ev string) int {
	n := 0
	for _, e := range l.lines[l.index("main prestop")+1:] {
		if e == "main prestop-done" {
			break
		}
		if e == ev {
			n++
		}
	}
	return n
}

// The kubelet's e2e case "should not continue running liveness probes for
// restartable init containers and restart them while in preStop", in both
// modes: while the regular container's preStop runs (its liveness failed
// under restartPolicy Never), the sidecar is neither probed, nor stopped by
// its failing probe, nor restarted.
func TestLifecycleSidecarHeldDuringPreStop(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-sidecar-prestop-hold.yaml", m.args...)
			r.wait(60 * time.Second)
			l := readLog(t, r.events)
			l.order(t, "main prestop", "main prestop-done", "main term", "side term")
			// One attempt may have been under way when the preStop began.
			if n := afterPreStop(l, "side probe"); n > 1 {
				t.Errorf("the sidecar was probed %d times during the preStop: %q", n, l.lines)
			}
			if n := afterPreStop(l, "side started"); n > 0 {
				t.Errorf("the sidecar started %d times during the preStop: %q", n, l.lines)
			}
		})
	}
}

// With KEP-4438's gate (--restart-container-during-termination) the
// sidecar whose probe fails during the preStop is stopped and started
// again while the preStop still runs, so the app can drain through it.
func TestLifecycleSidecarRestartedDuringPreStop(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			args := append([]string{"kube", "play", "--listen", "off", "--restart-container-during-termination"}, m.args...)
			r := startEnv(t, []string{"HOLD_LONG=1"}, append(args, testdata("lifecycle-sidecar-prestop-hold.yaml"))...)
			r.waitEvents(60*time.Second, "main prestop", "side again")
			if err := os.WriteFile(r.events+".release", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r.wait(60 * time.Second)
			l := readLog(t, r.events)
			l.order(t, "main prestop", "side again", "main prestop-done", "main term")
			if n := afterPreStop(l, "side started"); n == 0 {
				t.Errorf("the sidecar was not restarted during the preStop: %q", l.lines)
			}
		})
	}
}
