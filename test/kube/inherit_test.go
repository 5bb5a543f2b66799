package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// A fat pod's container that is itself `podvisor run` with its own config
// (issue 34 item 8): kube play hands its control socket to its re-exec in
// PODVISOR_CONTROL_INHERITED (fd numbers and a path); a container that
// inherited that variable took the fds as its own control socket, or
// refused to start. The inner podvisor must start normally, serve its own
// HTTP port without control routes, and neither it nor its processes see
// any of podvisor's hand-over variables.
func TestNestedRunGetsNoHandOver(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	ports, err := testharness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	envOut := filepath.Join(dir, "inner.env")
	inner := filepath.Join(dir, "inner.yaml")
	if err := os.WriteFile(inner, []byte(fmt.Sprintf(`listen: 127.0.0.1:%d
control: %s
processes:
  leaf:
    command: [sh, -c, 'env > %s.tmp && mv %s.tmp %s && exec sleep 1000']
`, ports[0], filepath.Join(dir, "inner.sock"), envOut, envOut, envOut)), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: nested}
spec:
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
    - name: fat
      command: [%s, run, -c, %s]
      volumeMounts: [{name: scratch, mountPath: /scratch-nested}]
`, podvisorBin, inner)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startEnv(t, []string{"PODVISOR_CONTROL=" + filepath.Join(dir, "outer.sock")}, "kube", "play", "--listen", "off", manifest)

	url := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	deadline := 30 * time.Second
	ok := testharness.Poll(deadline, 50*time.Millisecond, func() bool {
		code, _, err := testharness.Get(url+"/readyz", time.Second)
		_, statErr := os.Stat(envOut)
		return err == nil && code == 200 && statErr == nil
	})
	if !ok {
		t.Fatalf("the inner podvisor never became ready with its leaf running\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if code, _, err := testharness.Get(url+"/v1/identity", time.Second); err != nil || code != 404 {
		t.Errorf("GET /v1/identity on the inner HTTP port: %d %v, want 404 (control routes belong on the control socket)", code, err)
	}
	b, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(b), "\n") {
		for _, v := range []string{"PODVISOR_CONTROL_INHERITED=", "PODVISOR_KUBE_MOUNTED="} {
			if strings.HasPrefix(kv, v) {
				t.Errorf("a grandchild of kube play sees %s", kv)
			}
		}
	}
	if strings.Contains(r.stdout.String()+r.stderr.String(), "not a control socket kube play bound") {
		t.Errorf("the inner podvisor refused the leaked hand-over\n%s\n%s", r.stdout, r.stderr)
	}
}
