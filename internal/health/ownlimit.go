package health

import (
	"errors"
	"syscall"
)

// ownLimit reports whether err is podvisor running out of its own resources
// (file descriptors, memory, processes for an exec probe) rather than
// anything the probed process did, and if so the inconclusive Result for it.
// Charging such errors to the process would kill a healthy service because
// podvisor is short of fds (docs/reliability.md, D7).
func ownLimit(err error, spawning bool) (Result, bool) {
	errnos := []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS}
	if spawning {
		errnos = append(errnos, syscall.EAGAIN) // fork: out of processes
	}
	for _, e := range errnos {
		if errors.Is(err, e) {
			return Result{Inconclusive: true, Detail: "podvisor could not run the probe: " + err.Error()}, true
		}
	}
	return Result{}, false
}
