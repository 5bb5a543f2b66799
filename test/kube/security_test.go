package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
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
