package launch

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// FileWatcher.Watch tells of a matching change after the quiet period, and
// not of an ignored one.
func TestFileWatcherTellsOfChange(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan string, 8)
	spec := &config.Watch{Paths: []string{filepath.Join(dir, "*.conf")}, Ignore: []string{"skip.conf"}, Debounce: time.Millisecond}
	FileWatcher{Log: slog.New(slog.DiscardHandler)}.Watch(ctx, "app", spec, func(file string) { changed <- file })
	if err := os.WriteFile(filepath.Join(dir, "skip.conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(want, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := <-changed; got != want {
		t.Errorf("changed %s; want %s", got, want)
	}
}
