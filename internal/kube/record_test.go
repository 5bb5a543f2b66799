package kube

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// CleanStale removes what an unlocked record lists, only where nothing has
// been put since (empty directories and files, never symlinks), and leaves
// a record a live run holds alone.
func TestCleanStale(t *testing.T) {
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	p := func(s string) string { return filepath.Join(root, s) }
	for _, d := range []string{"a/b", "full"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(p("full/kept"), []byte("x"), 0o644)
	os.WriteFile(p("a/b/empty"), nil, 0o644)
	os.WriteFile(p("content"), []byte("x"), 0o644)
	os.Symlink(root, p("link"))
	tmp := filepath.Join(t.TempDir(), "podvisor-kube-123")
	os.MkdirAll(filepath.Join(tmp, "volumes", "v"), 0o755)

	live, err := OpenRecord(state)
	if err != nil {
		t.Fatal(err)
	}
	b := &Bound{record: live}
	if err := makeMountPoint(b, p("live/mnt")); err != nil {
		t.Fatal(err)
	}
	// A dead run's record, written as Bind and cmd/podvisor write one.
	dead := &Record{}
	if dead.f, err = os.OpenFile(filepath.Join(state, "run-1.jsonl"), os.O_WRONLY|os.O_CREATE, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"a", "a/b", "a/b/empty", "full", "content", "link", "gone"} {
		dead.add(recordEntry{Created: p(c)})
	}
	dead.Tmp(tmp)
	dead.add(recordEntry{Tmp: "/etc"}) // not a run directory: never removed
	dead.f.Close()

	removed, errs := CleanStale(state, nil)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if want := []string{p("a/b/empty"), p("a/b"), p("a"), tmp}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for _, kept := range []string{"full/kept", "content", "link", "live/mnt"} {
		if _, err := os.Lstat(p(kept)); err != nil {
			t.Errorf("%s removed: %v", kept, err)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "run-1.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the dead run's record is still there: %v", err)
	}
	// The live run ends cleanly: its mount points and record go.
	if errs := Unbind(b); len(errs) != 0 {
		t.Fatal(errs)
	}
	stateLeft(t, state)
}

// stateLeft fails t if state holds anything but its lock file.
func stateLeft(t *testing.T, state string) {
	t.Helper()
	ents, _ := os.ReadDir(state)
	for _, e := range ents {
		if e.Name() != "lock" {
			t.Errorf("state left: %s", e.Name())
		}
	}
}

// otherRun opens a record as another live run's, held locked (OpenRecord
// names the record after the pid: one process gets one).
func otherRun(t *testing.T, state, name string) *Record {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(state, name), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return &Record{f: f}
}

// exist fails t unless every path exists (want) or none does (!want).
func exist(t *testing.T, want bool, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v (%v)", p, err == nil, want, err)
		}
	}
}

// A mount point one run created and another then found is the second's
// too: the first leaves it when it ends, the last run out removes it, and
// a directory that was there before any run stays.
func TestSharedMountPoints(t *testing.T) {
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	p := func(s string) string { return filepath.Join(root, s) }
	if err := os.Mkdir(p("host"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := OpenRecord(state)
	if err != nil {
		t.Fatal(err)
	}
	first := &Bound{record: rec}
	second := &Bound{record: otherRun(t, state, "run-2.jsonl")}
	for _, m := range []struct {
		b      *Bound
		target string
	}{{first, "x/y/mnt"}, {first, "host/mnt"}, {second, "x/y/mnt"}, {second, "x/z"}, {second, "host/mnt"}} {
		if err := makeMountPoint(m.b, p(m.target)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{p("x"), p("x/y"), p("x/y/mnt"), p("x/z"), p("host/mnt")}; !slices.Equal(second.Created, want) {
		t.Errorf("the second run owns %q, want %q", second.Created, want)
	}
	if errs := Unbind(first); len(errs) != 0 {
		t.Fatal(errs)
	}
	exist(t, true, p("x/y/mnt"), p("x/z"), p("host/mnt"))
	if errs := Unbind(second); len(errs) != 0 {
		t.Fatal(errs)
	}
	exist(t, false, p("x"), p("host/mnt"))
	exist(t, true, p("host"))
	stateLeft(t, state)
}

// A dead run's mount points that a live run adopted stay until the live
// run ends; what a dead run adopted and no live run lists goes; and a run
// adopts what a dead run's record lists, since the record is cleaned later.
func TestCleanStaleSparesLiveRuns(t *testing.T) {
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	p := func(s string) string { return filepath.Join(root, s) }
	for _, d := range []string{"d/mnt", "e", "f/mnt"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := OpenRecord(state)
	if err != nil {
		t.Fatal(err)
	}
	// Dead runs' records: no lock held.
	for name, es := range map[string][]recordEntry{
		"run-1.jsonl": {{Created: p("d")}, {Created: p("d/mnt")}, {Created: p("f")}, {Created: p("f/mnt")}},
		"run-2.jsonl": {{Adopted: p("e")}},
	} {
		dead := &Record{}
		if dead.f, err = os.OpenFile(filepath.Join(state, name), os.O_WRONLY|os.O_CREATE, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			dead.add(e)
		}
		dead.f.Close()
	}
	other := &Bound{record: otherRun(t, state, "run-3.jsonl")}
	live := &Bound{record: rec}
	for b, target := range map[*Bound]string{other: "d/mnt", live: "f/mnt"} {
		if err := makeMountPoint(b, p(target)); err != nil {
			t.Fatal(err)
		}
	}
	removed, errs := CleanStale(state, nil)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if want := []string{p("e")}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	exist(t, true, p("d/mnt"), p("f/mnt"))
	exist(t, false, filepath.Join(state, "run-1.jsonl"), filepath.Join(state, "run-2.jsonl"))
	for _, b := range []*Bound{other, live} {
		if errs := Unbind(b); len(errs) != 0 {
			t.Fatal(errs)
		}
	}
	exist(t, false, p("d"), p("f"))
	stateLeft(t, state)
}

// Runs as PID 1 of their own PID namespaces share one pid and may share
// the state directory: a run's record must not take, or empty, another's.
func TestRecordNamesDoNotCollide(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	other := otherRun(t, state, "run-"+strconv.Itoa(os.Getpid())+".jsonl")
	if err := other.add(recordEntry{Created: "/nonexistent/mnt"}); err != nil {
		t.Fatal(err)
	}
	rec, err := OpenRecord(state)
	if err != nil {
		t.Fatalf("a second run with the same pid: %v", err)
	}
	defer rec.Close()
	if rec.f.Name() == other.f.Name() {
		t.Fatalf("both runs record in %s", rec.f.Name())
	}
	if listed, err := rec.othersListed(true); err != nil || !listed["/nonexistent/mnt"] {
		t.Errorf("the other run's record as read by the second: %v %v", listed, err)
	}
}

// makeMountPoint creates target as Bind does, without binding anything.
func makeMountPoint(b *Bound, target string) error {
	fd, err := b.mountPoint(target, true)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// A dead run's mount points inside a volume (recorded with the volume's
// directory) are removed from that directory without following a symlink
// planted since: an empty file outside, named as the mount point, stays.
func TestCleanStaleBeneathRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	state, host, outside := filepath.Join(root, "state"), filepath.Join(root, "host"), filepath.Join(root, "outside")
	for _, d := range []string{state, filepath.Join(host, "kept", "sub"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "f"), nil, 0o644)
	os.Symlink(outside, filepath.Join(host, "dir"))
	dead := &Record{}
	var err error
	if dead.f, err = os.OpenFile(filepath.Join(state, "run-1.jsonl"), os.O_WRONLY|os.O_CREATE, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"dir", "dir/f", "kept", "kept/sub"} {
		dead.add(recordEntry{Created: filepath.Join(host, c), Beneath: host})
	}
	// A volume bound in the dead run at kept/sub, its own mount point in it.
	dead.add(recordEntry{Created: filepath.Join(host, "kept", "sub", "m"), Beneath: filepath.Join(host, "kept", "sub")})
	dead.f.Close()
	os.Mkdir(filepath.Join(host, "kept", "sub", "m"), 0o755)
	removed, errs := CleanStale(state, nil)
	if _, err := os.Stat(filepath.Join(outside, "f")); err != nil {
		t.Errorf("removed through the planted link: %v", err)
	}
	want := []string{filepath.Join(host, "kept", "sub", "m"), filepath.Join(host, "kept", "sub"), filepath.Join(host, "kept")}
	if !slices.Equal(removed, want) || len(errs) != 0 {
		t.Errorf("removed %q (%v), want %q", removed, errs, want)
	}
	if _, err := os.Lstat(filepath.Join(state, "run-1.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the dead run's record is still there: %v", err)
	}
}

// A dead run's images are given back through the callback, but those it
// gave back itself; a failure keeps the record for the next cleaner, and
// a live run's images are never given back.
func TestCleanStaleImages(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	live, err := OpenRecord(state)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(live.Image("live/img:1"))
	dead := &Record{}
	deadPath := filepath.Join(state, "run-1.jsonl")
	if dead.f, err = os.OpenFile(deadPath, os.O_WRONLY|os.O_CREATE, 0o600); err != nil {
		t.Fatal(err)
	}
	must(dead.Image("a:1"))
	must(dead.Image("b:1"))
	must(dead.ImageGiven("a:1"))
	dead.f.Close()

	var asked [][]string
	fail := func(refs []string) error { asked = append(asked, refs); return os.ErrPermission }
	if _, errs := CleanStale(state, fail); len(errs) != 1 {
		t.Fatalf("errors %v, want one", errs)
	}
	if _, err := os.Stat(deadPath); err != nil {
		t.Fatalf("the record was removed though its image was not given back: %v", err)
	}
	if _, errs := CleanStale(state, nil); len(errs) != 1 {
		t.Fatalf("without a way to give images back: errors %v, want one", errs)
	}
	ok := func(refs []string) error { asked = append(asked, refs); return nil }
	removed, errs := CleanStale(state, ok)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if want := [][]string{{"b:1"}, {"b:1"}}; len(asked) != 2 || !slices.Equal(asked[0], want[0]) || !slices.Equal(asked[1], want[1]) {
		t.Errorf("asked to give back %q, want %q", asked, want)
	}
	if want := []string{"image mount b:1"}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	if _, err := os.Stat(deadPath); !os.IsNotExist(err) {
		t.Errorf("the dead record is still there: %v", err)
	}
}
