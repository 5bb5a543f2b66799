package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modes are kube play's: the kubelet's order at a node's pace (the
// default), the same at full speed (--pace fast), and podvisor's order.
var modes = []struct {
	name    string
	args    []string
	kubelet bool // the kubelet's order
}{{"kubelet", nil, true}, {"kubelet-fast", []string{"--pace", "fast"}, true}, {"ordered", []string{"--ordered"}, false}}

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
			if m.kubelet {
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

// --volume-root: no namespace, no root needed; the mount paths in commands
// and hooks are rewritten under the root, which is cleaned up after.
func TestVolumeRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	r := play(t, "prestop-shared-volume.yaml", "--volume-root", root)
	r.waitEvents(30*time.Second, "proxy start", "app start")
	if _, err := os.Stat(filepath.Join(root, "lifecycle", "main-running")); err != nil {
		t.Errorf("the app's file is not under the volume root: %v", err)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d\n%s", code, r.stdout)
	}
	before(t, r.readEvents(), "app stop", "proxy stop")
	if _, err := os.Lstat(filepath.Join(root, "lifecycle")); !os.IsNotExist(err) {
		t.Errorf("volume link left behind: %v", err)
	}
}

// Without root and without --volume-root, a pod with volumes is refused
// with the way out; nothing runs.
func TestVolumesNeedRoot(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("setpriv (util-linux) is missing")
		}
		t.Skip("no setpriv")
	}
	if os.Geteuid() != 0 {
		r := play(t, "prestop-shared-volume.yaml")
		checkRefusal(t, r)
		return
	}
	// nobody must be able to read the manifest whatever directory the
	// checkout is in (CI's clone may sit under a 0700 home): a copy in a
	// directory every user can search.
	r := startProg(t, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", podvisorBin,
		"kube", "play", "--listen", "off", worldReadableCopy(t, testdata("prestop-shared-volume.yaml")))
	checkRefusal(t, r)
}

// worldReadableCopy copies the file at src into a fresh directory that every
// user can search (mode 0755, the file 0644) and returns the copy's path.
func worldReadableCopy(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "podvisor-kube-public-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func checkRefusal(t *testing.T, r *run) {
	t.Helper()
	if code := r.wait(30 * time.Second); code != 2 {
		t.Errorf("exit %d, want 2\n%s", code, r.stderr)
	}
	for _, want := range []string{"/lifecycle", "run as root", "--volume-root DIR"} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("refusal lacks %q:\n%s", want, r.stderr)
		}
	}
	if len(r.readEvents()) > 0 {
		t.Error("a container ran")
	}
}

// A volume at /tmp (common with readOnlyRootFilesystem) hides the host's
// /tmp inside the run only; kube play keeps its own files elsewhere.
func TestVolumeAtTmp(t *testing.T) {
	needRoot(t)
	manifest := filepath.Join(t.TempDir(), "tmp.yaml")
	os.WriteFile(manifest, []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: tmpvol}
spec:
  template:
    spec:
      restartPolicy: Never
      volumes: [{name: tmp, emptyDir: {}}]
      containers:
        - name: a
          command: [sh, -c, 'touch /tmp/kube-play-test && test -z "$(ls /tmp | grep -v kube-play-test | grep -v podvisor-)" && echo "PWD=$(pwd)"']
          volumeMounts: [{name: tmp, mountPath: /tmp}]
`), 0o644)
	r := start(t, "kube", "play", "--listen", "off", manifest)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, r.stdout, r.stderr)
	}
	if _, err := os.Stat("/tmp/kube-play-test"); !os.IsNotExist(err) {
		t.Errorf("the file written to the /tmp volume reached the host: %v", err)
	}
	// The test's directory is under /tmp, hidden by the volume: the
	// working directory falls back to /.
	if !strings.Contains(r.stdout.String(), "| PWD=/\n") {
		t.Errorf("working directory not /:\n%s", r.stdout)
	}
}

// A Job's native sidecar never holds its completion: the job ends, then the
// sidecar is stopped, and the exit code is the job's.
func TestJobWithSidecar(t *testing.T) {
	data, err := os.ReadFile(testdata("job-with-sidecar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"0", "4"} {
		for _, m := range modes {
			t.Run(m.name+"/exit"+code, func(t *testing.T) {
				manifest := filepath.Join(t.TempDir(), "job.yaml")
				os.WriteFile(manifest, []byte(strings.Replace(string(data), `value: "0"`, `value: "`+code+`"`, 1)), 0o644)
				r := start(t, append(append([]string{"kube", "play", "--listen", "off"}, m.args...), manifest)...)
				if got := r.wait(30 * time.Second); strconv.Itoa(got) != code {
					t.Errorf("exit %d, want %s\n%s", got, code, r.stdout)
				}
				evs := r.readEvents()
				before(t, evs, "proxy start", "report start")
				before(t, evs, "report stop", "proxy stop")
			})
		}
	}
}
