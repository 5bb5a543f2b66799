package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Manifests whose ConfigMap or Secret keys or volume names lead out of the
// run's volume directory are refused before anything is written, when run
// as root (kube play's usual way). The run's temporary directory is put
// deep in a test directory, so that what the old code wrote lands where the
// test can see it, and nowhere else.
func TestHostileManifestWritesNothing(t *testing.T) {
	needRoot(t)
	cases := map[string]string{
		"configMap key": `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  volumes: [{name: v, configMap: {name: c}}]
  containers: [{name: a, command: [sh, -c, "true"], volumeMounts: [{name: v, mountPath: /podvisor-test-v}]}]
---
{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {"../../../../escaped": "x"}}
`,
		"secret stringData key": `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  volumes: [{name: v, secret: {secretName: s, defaultMode: 0777}}]
  containers: [{name: a, command: [sh, -c, "true"], volumeMounts: [{name: v, mountPath: /podvisor-test-v}]}]
---
{apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {"../../../../escaped": "x"}}
`,
		"volume name": `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  volumes: [{name: "../../../escaped", emptyDir: {}}]
  containers: [{name: a, command: [sh, -c, "true"], volumeMounts: [{name: "../../../escaped", mountPath: /podvisor-test-v}]}]
`,
	}
	for name, manifest := range cases {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			tmp := filepath.Join(base, "a", "b")
			if err := os.MkdirAll(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(base, "pod.yaml")
			if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(podvisorBin, "kube", "play", "--listen", "off", file)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PODVISOR_CONTROL=off")
			out, err := runFor(cmd, 30*time.Second)
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d (%v), want 2 (refused)\n%s", code, err, out)
			}
			if !strings.Contains(string(out), "pod.yaml") {
				t.Errorf("the refusal does not name the file:\n%s", out)
			}
			for _, p := range []string{filepath.Join(base, "a", "escaped"), filepath.Join(base, "escaped"), filepath.Join(tmp, "escaped")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was created outside the run's volumes", p)
				}
			}
		})
	}
}

// runFor runs cmd with a deadline and returns its combined output.
func runFor(cmd *exec.Cmd, timeout time.Duration) ([]byte, error) {
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return []byte(buf.String()), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return []byte(buf.String()), os.ErrDeadlineExceeded
	}
}

// --volume-root as root with runAsUser: the container reaches and writes
// its own emptyDir (the run's directory was 0700 root, so "Permission
// denied").
func TestVolumeRootRunAsUser(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	// The test's own directories must be searchable by the user too.
	for _, d := range []string{base, filepath.Dir(base)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(base, "root")
	file := filepath.Join(base, "pod.yaml")
	manifest := `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 65534, runAsGroup: 65534}
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
    - name: a
      command: [sh, -c, "echo hello > /scratch/out && cat /scratch/out && id -u"]
      volumeMounts: [{name: scratch, mountPath: /scratch}]
`
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(podvisorBin, "kube", "play", "--listen", "off", "--volume-root", root, file)
	cmd.Env = append(os.Environ(), "PODVISOR_CONTROL=off")
	// The container starts in podvisor's working directory: one the user can
	// reach, not the package's (a checkout under a 0700 home in CI).
	cmd.Dir = base
	out, err := runFor(cmd, 30*time.Second)
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d (%v), want 0\n%s", code, err, out)
	}
	for _, want := range []string{"| hello\n", "| 65534\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// As root, kube play binds its control socket before it enters its mount
// namespace: a volume over the socket's directory (/run, /tmp) must not
// hide it from the operate verbs, and it is removed at the end.
func TestControlSocketOutsideNamespace(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	sockDir := filepath.Join(dir, "run")
	sock := filepath.Join(sockDir, "c.sock")
	file := filepath.Join(dir, "pod.yaml")
	manifest := fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  volumes: [{name: run, emptyDir: {}}]
  containers:
    - name: a
      command: [sh, -c, "echo up; exec sleep 1000"]
      volumeMounts: [{name: run, mountPath: %s}]
`, sockDir)
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startEnv(t, []string{"PODVISOR_CONTROL=" + sock}, "kube", "play", "--listen", "off", file)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.stdout.String(), "| up") {
		if time.Now().After(deadline) {
			t.Fatalf("the container did not start\n%s\n%s", r.stdout, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd := exec.Command(podvisorBin, "stop", "a", "--control", sock)
	out, err := runFor(cmd, 30*time.Second)
	if err != nil || !strings.Contains(string(out), "a: stopped") {
		t.Fatalf("stop over the control socket: %v\n%s\npodvisor:\n%s", err, out, r.stdout)
	}
	r.signal(syscall.SIGTERM)
	r.wait(30 * time.Second)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("control socket left behind: %v", err)
	}
}
