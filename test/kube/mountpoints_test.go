package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
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

// sharedManifest writes a pod whose container puts its name in a file of
// an emptyDir bound at each of mountPaths (the first one holds the file),
// says "app start", and once the test creates $E2E_DIR/go, says "app read"
// with what it then finds in the file.
func sharedManifest(t *testing.T, name string, mountPaths ...string) string {
	t.Helper()
	var vols, mounts []string
	for i, mp := range mountPaths {
		vols = append(vols, fmt.Sprintf("{name: v%d, emptyDir: {}}", i))
		mounts = append(mounts, fmt.Sprintf("{name: v%d, mountPath: %q}", i, mp))
	}
	p := filepath.Join(t.TempDir(), "pod.yaml")
	f := mountPaths[0] + "/f"
	if err := os.WriteFile(p, []byte(`apiVersion: v1
kind: Pod
metadata: {name: `+name+`}
spec:
  volumes: [`+strings.Join(vols, ", ")+`]
  containers:
  - name: app
    command: [sh, -c, 'echo `+name+` > `+f+`; echo "app start $(date +%s%N)" >> "$E2E_EVENTS"; until [ -e "$E2E_DIR/go" ]; do sleep 0.05; done; echo "app read $(date +%s%N) $(cat `+f+` 2>&1)" >> "$E2E_EVENTS"; exec sleep 600']
    volumeMounts: [`+strings.Join(mounts, ", ")+`]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readShared lets r's container read its file and returns what it read.
func (r *run) readShared() string {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "go"), nil, 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.waitEvents(30*time.Second, "app read")
	evs, _ := testharness.ReadEvents(r.events)
	e, _ := testharness.FindEvent(evs, "app", "read")
	return e.Rest
}

// freshBase returns a directory name at the root for a test's mount points,
// removed at the end; the test is skipped if it exists.
func freshBase(t *testing.T, what string) string {
	t.Helper()
	base := fmt.Sprintf("/podvisor-kube-%s-%d", what, os.Getpid())
	if _, err := os.Lstat(base); err == nil {
		t.Skipf("%s exists", base)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return base
}

// Two runs bind volumes at the same path, which the first created: when
// the first exits, the second still has its volume (removing a directory
// that is a mount point in another mount namespace detaches that mount),
// and the last one out removes the mount points.
func TestConcurrentRunsShareMountPoint(t *testing.T) {
	needRoot(t)
	base := freshBase(t, "share")
	env := []string{"PODVISOR_KUBE_STATE=" + filepath.Join(t.TempDir(), "state")}
	target := base + "/shared/data"
	first := startEnv(t, env, "kube", "play", "--listen", "off", sharedManifest(t, "first", target))
	first.waitEvents(30*time.Second, "app start")
	second := startEnv(t, env, "kube", "play", "--listen", "off", sharedManifest(t, "second", target, base+"/own"))
	second.waitEvents(30*time.Second, "app start")
	first.signal(syscall.SIGTERM)
	if code := first.wait(30 * time.Second); code != 0 {
		t.Errorf("first run: exit %d\n%s", code, first.stderr)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the first run removed the mount point the second still uses: %v", err)
	}
	if got := second.readShared(); got != "second" {
		t.Errorf("the second run's container read %q from its volume after the first run exited, want %q", got, "second")
	}
	second.signal(syscall.SIGTERM)
	if code := second.wait(30 * time.Second); code != 0 {
		t.Errorf("second run: exit %d\n%s", code, second.stderr)
	}
	if _, err := os.Lstat(base); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(base)
		t.Errorf("mount points left after both runs: %s %v %v", base, ents, err)
	}
	for _, r := range []*run{first, second} {
		if strings.Contains(r.stderr.String(), "mount point") {
			t.Errorf("errors about mount points:\n%s", r.stderr)
		}
	}
}

// Runs started together, whose mount paths share missing parents, all
// start (none fails creating a directory another has just created, or in
// a parent another has just removed), each keeps its volumes while the
// others exit, and nothing is left after the last.
func TestConcurrentRunsCreateMountPoints(t *testing.T) {
	needRoot(t)
	base := freshBase(t, "create")
	env := []string{"PODVISOR_KUBE_STATE=" + filepath.Join(t.TempDir(), "state")}
	names := []string{"r0", "r1", "r2", "r3"}
	runs := make([]*run, len(names))
	for i, n := range names {
		runs[i] = startEnv(t, env, "kube", "play", "--listen", "off",
			sharedManifest(t, n, base+"/deep/common/data", base+"/deep/"+n+"/data"))
	}
	for _, r := range runs {
		r.waitEvents(30*time.Second, "app start")
	}
	for i, r := range runs {
		if got := r.readShared(); got != names[i] {
			t.Errorf("%s read %q from its volume, want %q", names[i], got, names[i])
		}
		r.signal(syscall.SIGTERM)
		if code := r.wait(30 * time.Second); code != 0 {
			t.Errorf("%s: exit %d\n%s", names[i], code, r.stderr)
		}
		if strings.Contains(r.stderr.String(), "mount point") {
			t.Errorf("%s: errors about mount points:\n%s", names[i], r.stderr)
		}
	}
	if _, err := os.Lstat(base); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(base)
		t.Errorf("mount points left after every run: %s %v %v", base, ents, err)
	}
}
