package kube

import (
	"syscall"
	"testing"
	"time"
)

// The cases of "Containers Lifecycle" (kubernetes
// test/e2e_node/container_lifecycle_test.go, v1.35 line) about a pod
// deleted while it initialises, and about the exit codes of sidecars at
// termination, in both modes. Deleting the pod is SIGTERM to podvisor.

// "should not hang in termination if terminated during initialization":
// only the running init container is stopped; no sidecar or regular
// container starts, no preStop runs, and podvisor is done well within the
// 3 s grace (the kubelet's test allows the grace and 3 s).
func TestLifecycleTerminatedDuringInit(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-terminated-in-init.yaml", m.args...)
			r.waitEvents(30*time.Second, "init started")
			sent := time.Now()
			r.signal(syscall.SIGTERM)
			code := r.wait(30 * time.Second)
			if took := time.Since(sent); took > 3*time.Second {
				t.Errorf("podvisor took %v after SIGTERM, want less than the 3 s grace", took)
			}
			if code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "init started", "init term")
			for _, ev := range []string{"s1 started", "s2 started", "s3 started", "r1 started", "s1 prestop", "s2 prestop", "s3 prestop"} {
				if l.index(ev) >= 0 {
					t.Errorf("%q after a termination during initialization: %q", ev, l.lines)
				}
			}
		})
	}
}

// "should terminate restartable init containers gracefully if there is a
// non-started restartable init container": s2 runs, its startupProbe never
// passes, s3 and r1 never start; on SIGTERM s2 gets its stop signal and
// podvisor is done after s2's 1 s, far from the 30 s grace.
func TestLifecycleNonStartedSidecar(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-nonstarted-sidecar.yaml", m.args...)
			r.waitEvents(30*time.Second, "s2 started", "s2 startup-probe")
			sent := time.Now()
			r.signal(syscall.SIGTERM)
			code := r.wait(60 * time.Second)
			if took := time.Since(sent); took > 10*time.Second {
				t.Errorf("podvisor took %v after SIGTERM, want about s2's 1 s", took)
			}
			if code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "i1 done", "s2 started", "s2 term", "s2 exit")
			l.order(t, "s2 startup-probe", "s2 term")
			for _, ev := range []string{"s3 started", "r1 started"} {
				if l.index(ev) >= 0 {
					t.Errorf("%q although s2 never started: %q", ev, l.lines)
				}
			}
		})
	}
}

// "should mark pod as succeeded if any of the restartable init containers
// have terminated with non-zero exit code", and "... by prestop hook": s2
// exits 1 on its stop signal and s3's preStop exits 1, the regular
// container succeeded: podvisor exits 0, the sidecars stopped in reverse
// order after it.
func TestLifecycleSidecarNonZeroExit(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-sidecar-nonzero.yaml", m.args...)
			r.waitEvents(30*time.Second, "r1 started")
			r.signal(syscall.SIGTERM)
			if code := r.wait(60 * time.Second); code != 0 {
				t.Errorf("exit %d, want 0 (the pod's phase ignores sidecars)\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "r1 term", "s3 term", "s2 term", "s1 term")
			l.order(t, "s3 prestop", "s3 term")
		})
	}
}
