package kube

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// The probes of regular containers as the kubelet runs them
// (pkg/kubelet/prober/worker.go, doProbe), in both modes: a job's
// readinessProbe after its startupProbe, readiness that never kills, and
// readiness probed while the container terminates (not a sidecar's).

// procStatus is one process of /status.
type procStatus struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Ready bool   `json:"ready"`
}

// status reads /status at addr: the processes by name and /readyz's answer.
func status(addr string) (map[string]procStatus, bool, error) {
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	var st struct {
		Ready     bool         `json:"ready"`
		Processes []procStatus `json:"processes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, false, err
	}
	m := map[string]procStatus{}
	for _, p := range st.Processes {
		m[p.Name] = p
	}
	return m, st.Ready, nil
}

// waitStatus waits until cond holds for /status at addr.
func (r *run) waitStatus(addr, what string, cond func(map[string]procStatus, bool) bool) {
	r.t.Helper()
	var last string
	ok := testharness.Poll(30*time.Second, 20*time.Millisecond, func() bool {
		ps, ready, err := status(addr)
		last = fmt.Sprintf("%v ready=%v err=%v", ps, ready, err)
		return err == nil && cond(ps, ready)
	})
	if !ok {
		r.t.Fatalf("/status never showed %s; last %s\nstdout:\n%s", what, last, r.stdout)
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A job's readinessProbe is probed only once its startupProbe has passed;
// it then sets the container's ready state both ways (/status, /readyz)
// and never stops it: the job runs on while not ready and succeeds.
func TestLifecycleReadinessOfAJob(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			r := start(t, append(append([]string{"kube", "play", "--listen", addr}, m.args...), testdata("lifecycle-job-readiness.yaml"))...)
			r.waitEvents(30*time.Second, "main started")
			r.waitStatus(addr, "main running, not ready", func(ps map[string]procStatus, ready bool) bool {
				return ps["main"].State == "running" && !ps["main"].Ready && !ready
			})
			touch(t, filepath.Join(r.dir, "started"))
			r.waitEvents(30*time.Second, "main startup-passed", "main readiness")
			touch(t, filepath.Join(r.dir, "ready"))
			r.waitStatus(addr, "main ready", func(ps map[string]procStatus, ready bool) bool {
				return ps["main"].Ready && ready
			})
			os.Remove(filepath.Join(r.dir, "ready"))
			r.waitStatus(addr, "main running and not ready again", func(ps map[string]procStatus, ready bool) bool {
				return ps["main"].State == "running" && !ps["main"].Ready && !ready
			})
			touch(t, filepath.Join(r.dir, "exit"))
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit %d, want 0 (readiness never stops a container)\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "main started", "main startup-passed", "main readiness", "main exit")
			if i := l.index("main readiness"); i < l.index("main startup-passed") {
				t.Errorf("readiness probed before the startupProbe passed: %q", l.lines)
			}
		})
	}
}

// The same for a regular container of an Always pod (a service): starting
// until its startupProbe and then its readinessProbe passed, readiness
// never before the startupProbe passed, and a failed readiness marks it not
// ready without restarting it.
func TestLifecycleReadinessOfAService(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			r := start(t, append(append([]string{"kube", "play", "--listen", addr}, m.args...), testdata("lifecycle-service-readiness.yaml"))...)
			r.waitEvents(30*time.Second, "main started")
			touch(t, filepath.Join(r.dir, "started"))
			r.waitEvents(30*time.Second, "main startup-passed", "main readiness")
			r.waitStatus(addr, "main starting, not ready", func(ps map[string]procStatus, ready bool) bool {
				return ps["main"].State == "starting" && !ps["main"].Ready && !ready
			})
			touch(t, filepath.Join(r.dir, "ready"))
			r.waitStatus(addr, "main running and ready", func(ps map[string]procStatus, ready bool) bool {
				return ps["main"].State == "running" && ps["main"].Ready && ready
			})
			os.Remove(filepath.Join(r.dir, "ready"))
			r.waitStatus(addr, "main running and not ready", func(ps map[string]procStatus, ready bool) bool {
				return ps["main"].State == "running" && !ps["main"].Ready && !ready
			})
			r.signal(syscall.SIGTERM)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "main started", "main startup-passed", "main readiness", "main term")
			if n := strings.Count(strings.Join(l.lines, "\n")+"\n", "main started\n"); n != 1 {
				t.Errorf("main started %d times, want once (readiness never restarts)", n)
			}
		})
	}
}

// "should execute readiness probe while in preStop, but not liveness": the
// liveness probe fails, the container's preStop runs (3 s), readiness is
// probed during it, liveness no more. The failed liveness check is a
// failure of the job whatever its exit code: podvisor exits 1.
func TestLifecycleReadinessDuringPreStop(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-readiness-prestop.yaml", m.args...)
			r.waitEvents(30*time.Second, "main readiness", "main liveness")
			touch(t, filepath.Join(r.dir, "unhealthy"))
			if code := r.wait(60 * time.Second); code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "main prestop", "main prestop-end", "main term")
			var during, live []string
			in := false
			for _, ev := range l.lines {
				switch {
				case ev == "main prestop":
					in = true
				case ev == "main prestop-end":
					in = false
				case in && ev == "main readiness":
					during = append(during, ev)
				}
				if in && ev == "main liveness" {
					live = append(live, ev)
				}
			}
			if len(during) == 0 {
				t.Errorf("readiness not probed during the preStop: %q", l.lines)
			}
			if len(live) > 0 {
				t.Errorf("liveness probed during the preStop: %q", l.lines)
			}
		})
	}
}

// Deleting the pod (SIGTERM): the regular container's readiness is probed
// during its 3 s preStop; the sidecar's no more once termination began (at
// most an attempt already under way).
func TestLifecycleReadinessInTermination(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-readiness-termination.yaml", m.args...)
			r.waitEvents(30*time.Second, "main readiness", "side readiness")
			r.signal(syscall.SIGTERM)
			if code := r.wait(60 * time.Second); code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "main prestop", "main prestop-end", "main term", "side term")
			start := l.index("main prestop")
			var main, side int
			for _, ev := range l.lines[start+1:] {
				switch ev {
				case "main prestop-end":
					if main == 0 {
						t.Errorf("main's readiness not probed during its preStop: %q", l.lines)
					}
					main = -1 << 30
				case "main readiness":
					main++
				case "side readiness":
					side++
				}
			}
			if side > 1 {
				t.Errorf("the sidecar's readiness was probed %d times after termination began: %q", side, l.lines)
			}
			if strings.Count(strings.Join(l.lines, "\n"), "main prestop\n") > 1 {
				t.Errorf("main's preStop ran twice: %q", l.lines)
			}
		})
	}
}
