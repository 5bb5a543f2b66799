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
	if got := tasks(t); got < n {
		t.Fatalf("%d threads after SpareThreads(%d)", got, n)
	}
}

func tasks(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
