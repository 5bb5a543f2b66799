package launch

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/podvisor/podvisor/internal/config"
)

// countingWatch is a fileWatch on dir/*.conf whose globs are counted.
func countingWatch(t *testing.T, dir string) (*fileWatch, *int) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skip("no inotify:", err)
	}
	t.Cleanup(func() { w.Close() })
	spec := &config.Watch{Paths: []string{filepath.Join(dir, "*.conf")}, Debounce: time.Second}
	fw := newFileWatch(w, "app", spec, slog.New(slog.DiscardHandler))
	fw.sync(true)
	globs := 0
	fw.glob = func(pat string) ([]string, error) {
		globs++
		return filepath.Glob(pat)
	}
	return fw, &globs
}

// A write is a change of the file written, nothing more: a process writing
// its log in a watched directory must not cost a readdir (glob) and a
// re-resolve of every link per write (issue 34 review item 3). Only what
// can change a name's meaning (create, remove, rename) re-resolves.
func TestFileWatchWriteDoesNotReResolve(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(data, "real.conf")
	os.WriteFile(target, []byte("a"), 0o644)
	link := filepath.Join(dir, "linked.conf")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "app.conf")
	os.WriteFile(plain, []byte("a"), 0o644)
	fw, globs := countingWatch(t, dir)
	if !slices.Contains(fw.w.WatchList(), data) {
		t.Fatalf("the link target's directory is not watched: %q", fw.w.WatchList())
	}

	logf := filepath.Join(dir, "app.log")
	for range 1000 {
		if got := fw.changes(fsnotify.Event{Name: logf, Op: fsnotify.Write}); len(got) != 0 {
			t.Fatalf("a write to %s is a change of %q", logf, got)
		}
	}
	if *globs != 0 {
		t.Errorf("1000 writes to a file no pattern matches: %d globs, want 0", *globs)
	}
	if got := fw.changes(fsnotify.Event{Name: plain, Op: fsnotify.Write}); !slices.Equal(got, []string{plain}) {
		t.Errorf("a write to %s: changes %q", plain, got)
	}
	if got := fw.changes(fsnotify.Event{Name: target, Op: fsnotify.Write}); !slices.Equal(got, []string{link}) {
		t.Errorf("a write through the link to %s: changes %q, want %s", target, got, link)
	}
	if *globs != 0 {
		t.Errorf("writes to matching files: %d globs, want 0", *globs)
	}

	// A rename over the link (the kubelet's ..data swap) still re-resolves.
	other := filepath.Join(data, "other.conf")
	os.WriteFile(other, []byte("b"), 0o644)
	tmp := filepath.Join(dir, "linked.tmp")
	if err := os.Symlink(other, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	if got := fw.changes(fsnotify.Event{Name: link, Op: fsnotify.Create}); !slices.Contains(got, link) {
		t.Errorf("the link now resolves elsewhere: changes %q, want %s", got, link)
	}
	if *globs == 0 {
		t.Error("a create did not re-resolve the links")
	}
}
