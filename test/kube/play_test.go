package kube

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

var modes = []struct {
	name string
	args []string
}{{"kubelet", nil}, {"ordered", []string{"--ordered"}}}

func play(t *testing.T, manifest string, extra ...string) *run {
	args := append([]string{"kube", "play", "--listen", "off"}, extra...)
	return start(t, append(args, testdata(manifest))...)
}

// Pattern 1: the postStart hook of the proxy holds the app back in both
// modes; on termination the kubelet stops both at once (the proxy is gone
// before the app has finished), --ordered stops the app first.
func TestPostStartSidecar(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "poststart-sidecar.yaml", m.args...)
			r.waitEvents(30*time.Second, "proxy ready", "app start")
			r.signal(syscall.SIGTERM)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit code %d\n%s", code, r.stdout)
			}
			evs := r.readEvents()
			before(t, evs, "proxy ready", "app start")
			if m.name == "kubelet" {
				before(t, evs, "proxy stop", "app stop")
			} else {
				before(t, evs, "app stop", "proxy stop")
			}
		})
	}
}

// Pattern 2: a native sidecar gated by its startupProbe, stopped after the
// app in both modes.
func TestNativeSidecarDeployment(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "native-sidecar.yaml", m.args...)
			r.waitEvents(30*time.Second, "log-shipper ready", "app start")
			r.signal(syscall.SIGTERM)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit code %d\n%s", code, r.stdout)
			}
			evs := r.readEvents()
			before(t, evs, "log-shipper ready", "app start")
			before(t, evs, "app stop", "log-shipper stop")
			if !strings.Contains(r.stderr.String(), "Deployment.spec.replicas: ignored") {
				t.Errorf("no warning about replicas:\n%s", r.stderr)
			}
		})
	}
}

// Pattern 3: init container then build, sharing an emptyDir at
// /opt/workspace that exists only in the run's mount namespace.
func TestGitBuildJob(t *testing.T) {
	needRoot(t)
	if _, err := os.Stat("/opt/workspace"); err == nil {
		t.Skip("/opt/workspace exists on this machine")
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "git-build.yaml", m.args...)
			if code := r.wait(60 * time.Second); code != 0 {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
			}
			evs := r.readEvents()
			before(t, evs, "clone stop", "build start")
			if b, err := os.ReadFile(r.dir + "/result.txt"); err != nil || strings.TrimSpace(string(b)) != "built" {
				t.Errorf("result.txt = %q, %v", b, err)
			}
			if _, err := os.Stat("/opt/workspace"); !os.IsNotExist(err) {
				t.Errorf("/opt/workspace left on the host: %v", err)
			}
		})
	}
}

// A Job whose container fails: podvisor exits with its code.
func TestFailingJob(t *testing.T) {
	needRoot(t)
	data, err := os.ReadFile(testdata("git-build.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := t.TempDir() + "/fail.yaml"
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(data), `value: "0"`, `value: "7"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, "kube", "play", "--listen", "off", manifest)
	if code := r.wait(60 * time.Second); code != 7 {
		t.Errorf("exit code %d, want 7 (the build container's)\n%s", code, r.stdout)
	}
}

// Pattern 4: the proxy's preStop hook waits until the app has removed its
// file in the shared emptyDir: the proxy stops after the app in both modes.
func TestPreStopSharedVolume(t *testing.T) {
	needRoot(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "prestop-shared-volume.yaml", m.args...)
			r.waitEvents(30*time.Second, "proxy start", "app start")
			r.signal(syscall.SIGTERM)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit code %d\n%s", code, r.stdout)
			}
			before(t, r.readEvents(), "app stop", "proxy stop")
			if _, err := os.Stat("/lifecycle"); !os.IsNotExist(err) {
				t.Errorf("/lifecycle left on the host: %v", err)
			}
		})
	}
}
