package proc

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Signal is a signal as the supervisor names it: the decision package
// (internal/supervisor) says which signal goes where without importing
// syscall (docs/architecture.md). It is syscall.Signal, so the config's
// stop.signal and an os.Signal from signal.Notify are one.
type Signal = syscall.Signal

// The signals the supervisor names.
const (
	SIGHUP  = syscall.SIGHUP
	SIGINT  = syscall.SIGINT
	SIGQUIT = syscall.SIGQUIT
	SIGKILL = syscall.SIGKILL
	SIGUSR1 = syscall.SIGUSR1
	SIGUSR2 = syscall.SIGUSR2
	SIGTERM = syscall.SIGTERM
	SIGCONT = syscall.SIGCONT
	SIGPIPE = syscall.SIGPIPE
)

// ParseSignal reads a signal as `podvisor signal` takes it: a name with or
// without the SIG prefix, in any case (HUP, SIGHUP, sighup), or a number.
func ParseSignal(s string) (Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return 0, fmt.Errorf("signal number %d is out of range 1-64", n)
		}
		return Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q (use a name such as HUP, USR1, TERM, or a number)", s)
}

// SignalName names a signal the way `podvisor signal` reports it, whether it
// was given by name or by number: SIGHUP, SIGUSR1, SIGRTMIN+2 (never Go's
// descriptions such as "hangup").
func SignalName(sig Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	// glibc's SIGRTMIN is 34 (the kernel's 32 and 33 are its own), as in
	// `kill -l`.
	if sig >= 34 && sig <= 64 {
		return fmt.Sprintf("SIGRTMIN+%d", sig-34)
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// ErrnoText is the text of an errno value a process reported (sd_notify's
// ERRNO=): "no such file or directory" for 2.
func ErrnoText(n int) string { return syscall.Errno(n).Error() }
