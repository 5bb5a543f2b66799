package control

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ParseSignal reads a signal as `podvisor signal` takes it: a name with or
// without the SIG prefix, in any case (HUP, SIGHUP, sighup), or a number.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return 0, fmt.Errorf("signal number %d is out of range 1-64", n)
		}
		return syscall.Signal(n), nil
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
