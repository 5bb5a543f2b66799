package proc

import (
	"syscall"
	"time"
)

// Exit is the reaped status of one child.
type Exit struct {
	Pid    int
	Status syscall.WaitStatus
	At     time.Time
	// OOMKilled: the process's own cgroup counted an OOM kill during its
	// run (set by internal/launch, which owns the cgroup).
	OOMKilled bool
}

// Code is the conventional shell exit code: the exit status, or 128+N for a
// death by signal N. It is never -1 (unlike os.ProcessState.ExitCode).
func (e Exit) Code() int {
	if e.Status.Signaled() {
		return 128 + int(e.Status.Signal())
	}
	return e.Status.ExitStatus()
}

// Signal returns the signal that killed the process, or 0.
func (e Exit) Signal() syscall.Signal {
	if e.Status.Signaled() {
		return e.Status.Signal()
	}
	return 0
}
