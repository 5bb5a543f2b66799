package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupFD is a cgroup v2 directory for CLONE_INTO_CGROUP.
type cgroupFD int

func (f cgroupFD) FD() int              { return int(f) }
func (cgroupFD) Enter() (func(), error) { return nil, errors.New("v2 only") }
func (cgroupFD) Home()                  {}
func (cgroupFD) Homes() string          { return "" }
func (cgroupFD) Stay() bool             { return false }

// A child cloned into a cgroup v2 directory from a spawner thread with a
// private fd table: the directory's fd lives in the main table, opened
// after the spawners unshared, as internal/cgroup opens one per start.
// clone3 used to get the main table's number and fail with EBADF (found
// by test/vm on a real cgroup v2 kernel).
func TestSpawnIntoCgroupFromAPrivateFDTable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting cgroup2 needs root")
	}
	r := newReaper(t)
	wait(t, spawn(t, r, Spec{Argv: []string{"true"}}), 5*time.Second) // starts the spawners
	if r.spawners().fdt.self < 0 {
		t.Skip("no pidfd_getfd or unshare here: spawners share the main table")
	}
	mnt := t.TempDir()
	if err := unix.Mount("none", mnt, "cgroup2", 0, ""); err != nil {
		t.Skip("cannot mount cgroup2 here: ", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	name := fmt.Sprintf("podvisor-proc-test-%d", os.Getpid())
	dir := filepath.Join(mnt, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) }) // after the child is reaped (cleanups run last first)
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	c := spawn(t, r, Spec{Argv: []string{"sleep", "1000"}, Cgroup: cgroupFD(fd)})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", c.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "0::/"+name+"\n") {
		t.Errorf("child's cgroups:\n%s\nwant 0::/%s", b, name)
	}
	_ = c.Signal(syscall.SIGKILL)
	wait(t, c, 5*time.Second)
}
