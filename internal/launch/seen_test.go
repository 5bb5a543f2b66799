package launch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// slept reads the state after the last ')' of /proc/PID/stat (a command
// name may hold ')' and spaces); a process gone counts as slept.
func TestSlept(t *testing.T) {
	dir := t.TempDir()
	for stat, want := range map[string]bool{
		"12 (sh) S 1 12":        true,
		"12 (a) b) R 1 12":      false,
		"12 (x) D 1 12":         false,
		"12 (x) Z 1 12":         true,
		"12 (truncated":         true,
		"12 (odd name) ) W 1 2": false,
	} {
		path := filepath.Join(dir, "stat")
		if err := os.WriteFile(path, []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := slept(path); got != want {
			t.Errorf("slept(%q) = %v; want %v", stat, got, want)
		}
	}
	if !slept(filepath.Join(dir, "gone")) {
		t.Error("a process gone does not count as slept")
	}
}

// WatchSeen tells of a process that is gone at once (it cannot be running
// any more), from its own goroutine.
func TestWatchSeenGone(t *testing.T) {
	seen := make(chan struct{})
	if !(&Launcher{}).WatchSeen(context.Background(), 1<<30, func() { close(seen) }) {
		t.Fatal("WatchSeen does not watch")
	}
	<-seen
}
