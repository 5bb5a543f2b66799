package proc

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Spawner threads fork from a private file descriptor table.
//
// The kernel copies the forking thread's whole fd table into every child and
// then closes the close-on-exec ones again in its execve: two passes over
// every fd podvisor holds, per spawn. podvisor holds two pipe ends per child
// (its log readers), so with thousands of children each spawn costs
// thousands of fd copies and closes, and a start of N children costs O(N²)
// (perf: the start of 1,000 and 5,000 children against a shell loop).
//
// So each spawner thread unshares its fd table (unshare(CLONE_FILES)) once,
// while podvisor holds only a handful of fds, and its forks copy only those.
// The fds a child needs (its stdout and stderr pipe ends, a notify fd) live
// in podvisor's main table; the spawner copies them into its own with
// pidfd_getfd(2) on podvisor's own pidfd, forks, and closes the copies.
//
// Only the spawner goroutines, each locked to its thread for good, ever run
// on such a thread, and they touch main-table fds only by these copies. The
// Go runtime's own fds (the netpoller's epoll and eventfd) exist before the
// unshare, so they have the same numbers in both tables; prepareFDTables
// makes sure of that. Where unshare or pidfd_getfd is unavailable (an old
// kernel, a seccomp profile that refuses them), spawners share the main
// table as before: slower with thousands of children, otherwise the same.
type fdTables struct {
	self int // pidfd of podvisor itself, -1: spawners share the main table
	null int // /dev/null, every child's stdin; present in every table
}

// prepareFDTables runs once, before the first spawner thread starts.
func (p *Spawners) prepareFDTables() {
	p.fdt = fdTables{self: -1, null: -1}
	// The netpoller's fds must exist before any unshare: a pipe is
	// pollable, so making one initialises it.
	if pr, pw, err := os.Pipe(); err == nil {
		pr.Close()
		pw.Close()
	}
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		p.nullErr = &os.PathError{Op: "open", Path: os.DevNull, Err: err}
		return
	}
	p.fdt.null = null
	self, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		p.note(true, "spawners share podvisor's fd table", os.NewSyscallError("pidfd_open", err))
		return
	}
	probe, err := unix.PidfdGetfd(self, null, 0)
	if err != nil {
		unix.Close(self)
		p.note(true, "spawners share podvisor's fd table", os.NewSyscallError("pidfd_getfd", err))
		return
	}
	unix.Close(probe)
	p.fdt.self = self
}

// unshareFDTable gives the calling (locked) spawner thread its own fd table;
// false: it shares the main one.
func (p *Spawners) unshareFDTable() bool {
	if p.fdt.self < 0 {
		return false
	}
	if err := unix.Unshare(unix.CLONE_FILES); err != nil {
		p.note(true, "a spawner shares podvisor's fd table", os.NewSyscallError("unshare", err))
		return false
	}
	p.dropCopies()
	return true
}

// dropCopies closes, in the calling thread's private table, what the unshare
// copied from the main table and the spawner does not need: everything but
// /dev/null, podvisor's pidfd and the Go runtime's own netpoller fds (an
// epoll and an eventfd, which must keep their numbers). A copy of a pipe's
// write end would keep its reader from ever seeing EOF (a child's output
// pipe made just before the spawners started), a copy of a socket would keep
// it open after podvisor closed it, and a file opened meanwhile (the config
// being read while the spawners start) would stay open for good.
func (p *Spawners) dropCopies() {
	ents, err := os.ReadDir("/proc/thread-self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 || fd == p.fdt.null || fd == p.fdt.self {
			continue
		}
		target, err := os.Readlink("/proc/thread-self/fd/" + e.Name())
		if err != nil {
			continue // the listing's own fd, closed by now
		}
		if target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]" {
			continue
		}
		unix.Close(fd)
	}
}

// importFDs returns files (main-table fds; ^0 for "closed") as fds of the
// calling spawner thread's private table, and a func closing the copies it
// made. /dev/null is in every table already.
func (p *Spawners) importFDs(files []uintptr) ([]uintptr, func(), error) {
	local := make([]uintptr, len(files))
	var made []int
	done := func() {
		for _, fd := range made {
			unix.Close(fd)
		}
	}
	for i, fd := range files {
		if fd == ^uintptr(0) || int(fd) == p.fdt.null {
			local[i] = fd
			continue
		}
		c, err := unix.PidfdGetfd(p.fdt.self, int(fd), 0)
		if err != nil {
			done()
			return nil, nil, os.NewSyscallError("pidfd_getfd", err)
		}
		made = append(made, c)
		local[i] = uintptr(c)
	}
	return local, done, nil
}

// spawnReq is one fork+exec. Files are the child's fds 0, 1, 2, ... as fds
// of podvisor's main table, taken on the caller's thread (os.File.Fd also
// switches the file to blocking mode, and must see the main table).
type spawnReq struct {
	path  string
	argv  []string
	env   []string
	dir   string
	sys   *syscall.SysProcAttr
	files []uintptr
}

// forkExec runs q on the calling spawner thread, whose table is private if
// private is set.
func (p *Spawners) forkExec(q spawnReq, private bool) (int, error) {
	files, sys := q.files, q.sys
	if private {
		local, done, err := p.importFDs(files)
		if err != nil {
			return 0, err
		}
		defer done()
		files = local
		// CLONE_INTO_CGROUP's directory fd is a main-table fd too
		// (cgroup v2; opened after the spawners unshared): clone3 here
		// would fail with EBADF.
		if sys != nil && sys.UseCgroupFD {
			c, err := unix.PidfdGetfd(p.fdt.self, sys.CgroupFD, 0)
			if err != nil {
				return 0, os.NewSyscallError("pidfd_getfd", err)
			}
			defer unix.Close(c)
			cp := *sys
			cp.CgroupFD = c
			sys = &cp
		}
	}
	if err := fdHeadroom(files); err != nil {
		return 0, err
	}
	pid, _, err := syscall.StartProcess(q.path, q.argv, &syscall.ProcAttr{Dir: q.dir, Env: q.env, Files: files, Sys: sys})
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: q.path, Err: err}
	}
	return pid, nil
}

// fdHeadroom refuses a fork whose child could not arrange its fds: Go's fork
// child moves fds above the highest one it is given, and a dup beyond
// RLIMIT_NOFILE fails there with EBADF, which would read as a broken
// executable. podvisor near its fd limit is out of fds, retryably (EMFILE).
func fdHeadroom(files []uintptr) error {
	top := 0
	for _, fd := range files {
		if fd != ^uintptr(0) {
			top = max(top, int(fd))
		}
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return nil
	}
	if need := uint64(top + len(files) + 3); need > lim.Cur {
		return os.NewSyscallError("fork", unix.EMFILE)
	}
	return nil
}
