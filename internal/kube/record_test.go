package kube

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
	if err := b.mountPoint(p("live/mnt"), true); err != nil {
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

	removed, errs := CleanStale(state)
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
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Errorf("state left: %v", ents)
	}
}
