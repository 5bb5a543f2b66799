package proc

import "runtime"

// SpareThreads makes the Go runtime start n OS threads now and keep them
// idle for later. The runtime aborts when it cannot create a thread it
// needs (golang/go#14835), which happens at a cgroup's pids.max, and a
// fork bomb among the children is enough to reach it (FAULTS D7): every
// goroutine that blocks in a system call needs a thread of its own. Threads
// that exist already are reused, never ended, so the headroom made here
// holds for podvisor's life. Each costs a kernel task and a few pages.
func SpareThreads(n int) {
	held := make(chan struct{})
	release := make(chan struct{})
	for range n {
		go func() {
			// Locked, so each goroutine holds a thread of its own until
			// all n exist; unlocked before returning, so the thread goes
			// back to the runtime's idle list instead of exiting.
			runtime.LockOSThread()
			held <- struct{}{}
			<-release
			runtime.UnlockOSThread()
		}()
	}
	for range n {
		<-held
	}
	close(release)
}
