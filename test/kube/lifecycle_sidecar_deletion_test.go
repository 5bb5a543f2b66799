package kube

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// KEP-4438 in the pod's deletion: a sidecar that crashes while the regular
// container drains is restarted with --restart-container-during-termination
// (and stopped after main, in its turn), and is not without it, as the
// kubelet does today.
func TestLifecycleSidecarRestartedDuringDeletion(t *testing.T) {
	for _, gate := range []bool{false, true} {
		name := "default"
		args := []string{"kube", "play", "--listen", "off"}
		if gate {
			name = "gate"
			args = append(args, "--restart-container-during-termination")
		}
		t.Run(name, func(t *testing.T) {
			r := startEnv(t, nil, append(args, testdata("lifecycle-sidecar-deletion-restart.yaml"))...)
			r.waitEvents(60*time.Second, "side started", "main started")
			r.signal(syscall.SIGTERM)
			code := r.wait(60 * time.Second)
			l := readLog(t, r.events)
			starts := 0
			for _, e := range l.lines {
				if e == "side started" {
					starts++
				}
			}
			if !gate {
				if starts != 1 || slices.Contains(l.lines, "main saw-again") {
					t.Errorf("without the gate the sidecar started %d times (want 1): %q", starts, l.lines)
				}
				return
			}
			if code != 0 {
				t.Errorf("exit %d, want 0 (main drained, the sidecar stopped in its turn)\n%s", code, r.stderr)
			}
			l.order(t, "main term", "side crash", "main saw-again", "main exit", "side term")
			if starts != 2 {
				t.Errorf("with the gate the sidecar started %d times, want 2: %q", starts, l.lines)
			}
		})
	}
}
