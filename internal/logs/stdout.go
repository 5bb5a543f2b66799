package logs

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// PollableStdout returns a writer for f (podvisor's stdout) with write
// deadlines, so that a sink over it can tell a stalled reader from a slow
// one (Options.StallTimeout), or f itself when that cannot be had.
//
// A pipe or FIFO is opened again through /proc/self/fd: a new open file of
// the same pipe, made non-blocking, so that Go's poller (and its deadlines)
// can serve it, while the open file podvisor inherited, which its parent may
// share, keeps its flags. A terminal, a regular file or a socket is left as
// it is: a file's writes do not stall, and a terminal or socket cannot be
// opened again without changing what others share.
func PollableStdout(f *os.File) *os.File {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return f
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return f // no reader left (ENXIO), or no /proc: writes fail or block as before
	}
	return os.NewFile(uintptr(fd), f.Name())
}
