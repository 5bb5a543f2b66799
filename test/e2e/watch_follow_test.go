package e2e

// watch: follows what a watched path resolves to (a ConfigMap or Secret
// volume updated by the kubelet's atomic writer) and a watched directory
// that is removed and made again (issue 34 items 10 and 11).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// atomicWrite does what the kubelet's atomic writer does to a ConfigMap
// volume at dir on an update: the new contents in a new timestamped
// directory, a `..data_tmp` symlink to it renamed over `..data`, the old
// directory removed. The visible files are `KEY -> ..data/KEY`.
func atomicWrite(t *testing.T, dir, stamp string, files map[string]string) {
	t.Helper()
	ts := "..2026_12_01_10_00_00." + stamp
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := os.Symlink(ts, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for k := range files {
		link := filepath.Join(dir, k)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", k), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWatch_FollowsConfigMapUpdate(t *testing.T) {
	t.Parallel()
	vol := filepath.Join(t.TempDir(), "config")
	if err := os.Mkdir(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	atomicWrite(t, vol, "1", map[string]string{"app.conf": "v1", "other.conf": "o1"})
	conf := filepath.Join(vol, "app.conf")
	r := ffStartHTTP(t, `
processes:
  api:
    command: `+ffq(ev("api", "start")+"; exec sleep 600")+`
    watch: {paths: ["`+conf+`"], debounce: 100ms}
  conf:
    command: `+ffq("trap '"+ev("conf", "hup")+"' HUP; "+ev("conf", "start")+"; while :; do sleep 0.05; done")+`
    watch: {paths: ["`+conf+`"], action: "signal HUP", debounce: 100ms}
`)
	eventually(t, 10*time.Second, func() bool {
		evs := r.ReadEvents(t)
		return len(filterEvents(evs, "api", "start")) == 1 && len(filterEvents(evs, "conf", "start")) == 1
	}, "not started")
	for i, stamp := range []string{"2", "3"} {
		atomicWrite(t, vol, stamp, map[string]string{"app.conf": "v" + stamp, "other.conf": "o1"})
		eventually(t, 10*time.Second, func() bool {
			evs := r.ReadEvents(t)
			return len(filterEvents(evs, "api", "start")) == i+2 && len(filterEvents(evs, "conf", "hup")) == i+1
		}, "update %d of the ConfigMap volume: api not restarted or conf not signalled: %v\n%s", i+1, r.ReadEvents(t), r.Stdout)
	}
	if n := len(filterEvents(r.ReadEvents(t), "conf", "start")); n != 1 {
		t.Errorf("conf started %d times, want 1 (signalled, not restarted)", n)
	}
	ffStopClean(t, r, 10*time.Second)
}

func TestWatch_DirectoryMadeAgain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := ffStartHTTP(t, `
processes:
  api:
    command: `+ffq(ev("api", "start")+"; exec sleep 600")+`
    watch: {paths: ["`+dir+`/*.txt"], debounce: 100ms}
`)
	starts := func() int { return len(filterEvents(r.ReadEvents(t), "api", "start")) }
	eventually(t, 10*time.Second, func() bool { return starts() == 1 }, "not started")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r.Stdout.WaitFor(t, `watch: directory removed`, scaled(10*time.Second))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.Stdout.WaitFor(t, `watch: directory is back`, scaled(10*time.Second))
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { return starts() == 2 }, "a change in the directory made again did not restart api\n%s", r.Stdout)
	// Still watched after that.
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { return starts() == 3 }, "a second change did not restart api\n%s", r.Stdout)
	if !strings.Contains(r.Stdout.String(), "dir="+dir) {
		t.Errorf("the log does not name the directory:\n%s", r.Stdout)
	}
	ffStopClean(t, r, 10*time.Second)
}

// A watched path that is a symlink to a file elsewhere: a write to the
// target is a change of the path.
func TestWatch_WriteThroughSymlink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir, other := filepath.Join(base, "etc"), filepath.Join(base, "shared")
	for _, d := range []string{dir, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(other, "real.conf")
	if err := os.WriteFile(target, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "app.conf")); err != nil {
		t.Fatal(err)
	}
	r := ffStartHTTP(t, `
processes:
  api:
    command: `+ffq(ev("api", "start")+"; exec sleep 600")+`
    watch: {paths: ["`+dir+`/*.conf"], debounce: 100ms}
`)
	starts := func() int { return len(filterEvents(r.ReadEvents(t), "api", "start")) }
	eventually(t, 10*time.Second, func() bool { return starts() == 1 }, "not started")
	// Another file in the target's directory is no change of a watched path.
	if err := os.WriteFile(filepath.Join(other, "unrelated"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { return starts() == 2 }, "a write to the symlink's target did not restart api\n%s", r.Stdout)
	ffStopClean(t, r, 10*time.Second)
	if n := starts(); n != 2 {
		t.Errorf("api started %d times, want 2", n)
	}
}
