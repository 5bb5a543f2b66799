package proc

import (
	"os"
	"testing"
)

// SpareThreads leaves at least n threads behind (more than this test
// binary needs on its own), and they stay: unlocked, not ended. A second
// call with a total already reached makes none.
func TestSpareThreadsStay(t *testing.T) {
	const n = 48
	SpareThreads(n)
	got := dirEntries(t, "/proc/self/task")
	if got < n {
		t.Fatalf("%d threads after SpareThreads(%d)", got, n)
	}
	SpareThreads(n)
	SpareThreads(n / 2)
	if again := dirEntries(t, "/proc/self/task"); again > got+2 {
		t.Fatalf("%d threads after topping up to %d again, %d before: a total must not add threads", again, n, got)
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
