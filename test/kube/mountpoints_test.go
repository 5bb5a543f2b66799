package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A run as root creates missing mount points on the real filesystem (a
// mount namespace isolates mounts, not directories) and records them
// first: a run killed with SIGKILL leaves them, and the next run removes
// them before it binds its own volumes.
func TestKilledRunsMountPointsCleaned(t *testing.T) {
	needRoot(t)
	base := fmt.Sprintf("/podvisor-kube-test-%d", os.Getpid())
	if _, err := os.Stat(base); err == nil {
		t.Skipf("%s exists", base)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	state := filepath.Join(t.TempDir(), "state")
	env := []string{"PODVISOR_KUBE_STATE=" + state}
	manifest := func(mountPath string) string {
		p := filepath.Join(t.TempDir(), "pod.yaml")
		// The container ends when podvisor does ($PPID), killed or not.
		if err := os.WriteFile(p, []byte(`apiVersion: v1
kind: Pod
metadata: {name: mp}
spec:
  volumes: [{name: data, emptyDir: {}}]
  containers:
  - name: app
    command: [sh, -c, 'echo "app start $(date +%s%N)" >> "$E2E_EVENTS"; while kill -0 $PPID 2>/dev/null; do sleep 0.1; done']
    volumeMounts: [{name: data, mountPath: "`+mountPath+`"}]
`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	killed := startEnv(t, env, "kube", "play", "--listen", "off", manifest(base+"/a/data"))
	killed.waitEvents(30*time.Second, "app start")
	killed.signal(syscall.SIGKILL)
	killed.wait(10 * time.Second)
	if _, err := os.Stat(base + "/a/data"); err != nil {
		t.Fatalf("the killed run left no mount point (%v): this test no longer shows anything", err)
	}
	records, _ := filepath.Glob(filepath.Join(state, "run-*.jsonl"))
	if len(records) != 1 {
		t.Fatalf("records %v, want the killed run's", records)
	}
	next := startEnv(t, env, "kube", "play", "--listen", "off", manifest(base+"/b"))
	next.waitEvents(30*time.Second, "app start")
	if _, err := os.Lstat(base); err == nil || !os.IsNotExist(err) {
		if ents, _ := os.ReadDir(base); len(ents) != 1 || ents[0].Name() != "b" {
			t.Errorf("the killed run's mount points are still there: %v", ents)
		}
	}
	if _, err := os.Stat(base + "/a"); !os.IsNotExist(err) {
		t.Errorf("%s/a still there (%v)\nstderr:\n%s", base, err, next.stderr)
	}
	if !strings.Contains(next.stderr.String(), "removed what a killed run left: "+base+"/a/data, "+base+"/a, "+base) {
		t.Errorf("no notice of the cleaning:\n%s", next.stderr)
	}
	next.signal(syscall.SIGTERM)
	if code := next.wait(30 * time.Second); code != 0 {
		t.Errorf("exit %d\n%s", code, next.stderr)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("%s left after a clean run (%v)", base, err)
	}
	if records, _ := filepath.Glob(filepath.Join(state, "run-*.jsonl")); len(records) != 0 {
		t.Errorf("records left: %v", records)
	}
}
