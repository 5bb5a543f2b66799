package proc

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ReserveFDs grows podvisor's fd table, in one step, to hold at least n fds.
//
// podvisor keeps two pipe ends per child. The kernel grows a process's fd
// table by doubling it, and in a multi-threaded process (every Go program)
// each growth waits for an RCU grace period, during which every thread that
// opens an fd waits too: 8-24 ms per growth on a 2-vCPU VM with HZ=250.
// Starting 200 children from a table of 256 stalled all launches once for
// about 10 ms; from a container's usual 64, three times; starting 1,000,
// three to five times. Reserved once, before the children start, the
// table grows once, while podvisor still sets up.
//
// The table never shrinks; a slot costs 8 bytes. A table already big
// enough costs nothing. Errors (a low RLIMIT_NOFILE) leave the table to
// grow as needed.
func ReserveFDs(n int) error {
	if n <= 0 {
		return nil
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && uint64(n) > lim.Cur {
		n = int(lim.Cur)
	}
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("reserve fds: %w", os.NewSyscallError("open", err))
	}
	defer unix.Close(null)
	// F_DUPFD takes the lowest free fd at or above its argument: unlike
	// dup2 it cannot close an fd in use.
	top, err := unix.FcntlInt(uintptr(null), unix.F_DUPFD_CLOEXEC, n-1)
	if err != nil {
		return fmt.Errorf("reserve %d fds: %w", n, os.NewSyscallError("fcntl", err))
	}
	return unix.Close(top)
}
