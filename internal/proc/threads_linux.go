package proc

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// SpareThreads makes sure the process has at least total OS threads, the
// ones the Go runtime has made so far included, and leaves the extra ones
// idle for later. The runtime aborts when it cannot create a thread it needs
// (golang/go#14835), which happens at a cgroup's pids.max, and a fork bomb
// among the children is enough to reach it (docs/reliability.md, D7): every goroutine
// that blocks in a system call needs a thread of its own. Threads that exist
// already are reused, never ended, so the headroom made here holds for
// podvisor's life. Each costs a kernel task and a few pages; a total, not a
// count to add, keeps an idle podvisor at a handful of threads.
func SpareThreads(total int) {
	release := make(chan struct{})
	defer close(release)
	// Locked goroutines, each holding a thread: an idle thread of the
	// runtime's is taken before a new one is made, so after a batch the
	// count may still be short; a few batches, each of what is missing.
	for held, batch := 0, 0; held < total && batch < 4; batch++ {
		missing := min(total-threadCount(), total-held)
		if missing <= 0 {
			return
		}
		locked := make(chan struct{}, missing)
		for range missing {
			go func() {
				// Locked, so the goroutine holds a thread of its own until
				// release; unlocked before returning, so the thread goes
				// back to the runtime's idle list instead of exiting.
				runtime.LockOSThread()
				locked <- struct{}{}
				<-release
				runtime.UnlockOSThread()
			}()
		}
		for range missing {
			<-locked
		}
		held += missing
	}
}

// threadCount is the number of threads of this process (its /proc/self/task
// entries); a large number if it cannot be read, so SpareThreads stops.
func threadCount() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 1 << 30
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return 1 << 30
}
