package testharness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"golang.org/x/sys/unix"
)

// UnshareArgv runs a command as PID 1 of a fresh PID namespace with its own
// /proc.
var UnshareArgv = []string{"unshare", "--pid", "--fork", "--mount-proc"}

var unshareOnce = sync.OnceValue(func() error {
	out, err := exec.Command(UnshareArgv[0], append(UnshareArgv[1:], "true")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	return nil
})

// CanUnshare reports, once per test binary, why UnshareArgv cannot work here
// (it needs root, or a kernel and container that allow it), or nil.
func CanUnshare() error { return unshareOnce() }

// OpenPTY opens a new pseudo-terminal pair.
func OpenPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}
