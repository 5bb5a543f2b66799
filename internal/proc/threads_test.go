package proc

import (
	"os"
	"testing"
)

// SpareThreads leaves at least n threads behind (more than this test
// binary needs on its own), and they stay: unlocked, not ended.
func TestSpareThreadsStay(t *testing.T) {
	const n = 48
	SpareThreads(n)
	if got := dirEntries(t, "/proc/self/task"); got < n {
		t.Fatalf("%d threads after SpareThreads(%d)", got, n)
	}
}

// dirEntries counts the entries of a /proc directory (threads, fds).
func dirEntries(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
