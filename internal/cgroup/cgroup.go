// Package cgroup gives a process a cgroup of its own under podvisor's, with
// memory, CPU and pids limits (docs/resources.md). It speaks cgroup v2 (the
// unified hierarchy) and v1 (one hierarchy per controller, as on hybrid
// hosts). Nothing here runs unless a process asks for limits.
package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Limits are what a process's cgroup enforces; 0 leaves a limit unset.
type Limits struct {
	MemoryMax  int64 // bytes
	MemoryHigh int64 // bytes
	CPUMax     int64 // millicores
	CPUWeight  int64 // 1..10000 (v2 cpu.weight)
	PidsMax    int64
}

// cpuPeriod is the CFS period the CPU quota is a share of, as the kubelet
// uses; minQuota is the least quota the kernel accepts (1 ms).
const (
	cpuPeriod = 100000
	minQuota  = 1000
)

// quota is the CPU time per period for millicores.
func quota(millis int64) int64 { return max(millis*cpuPeriod/1000, minQuota) }

// shares is v1 cpu.shares for a v2 weight, the conversion the OCI
// runtimes use (its inverse: weight = 1 + (shares-2)*9999/262142).
func shares(weight int64) int64 { return 2 + (weight-1)*262142/9999 }

// Usage is what a cgroup's tree uses.
type Usage struct {
	Memory   int64         // bytes charged now
	CPU      time.Duration // CPU time since the cgroup was made, if CPUKnown
	CPUKnown bool          // false: a v1 group without cpuacct (the /proc walk counts it)
}

// Events are what the kernel refused a cgroup's tree since it was made.
type Events struct {
	OOMKills     uint64 // tasks the OOM killer ended in it
	ForkFailures uint64 // forks refused at pids.max
}

// writeFile writes one value to a cgroup file, naming the file on error.
//
// perf: open, write and close by system call. os.OpenFile would also
// register the descriptor with the runtime's poller (kernfs files can be
// polled) and remove it at Close: two more system calls and the poller's
// locks at each of the writes a start makes (docs/BENCHMARKS.md section 26).
func writeFile(path, value string) error {
	fd, err := openFile(path, unix.O_WRONLY)
	if err != nil {
		return err
	}
	return writeFD(fd, path, value)
}

// writeFD writes value to fd, a cgroup file opened to write, and closes it.
func writeFD(fd int, path, value string) error {
	var (
		n   int
		err error
	)
	for {
		n, err = unix.Write(fd, []byte(value))
		if err != unix.EINTR {
			break
		}
	}
	unix.Close(fd)
	if err == nil && n != len(value) {
		err = unix.EIO
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

// writeFileAt is writeFile of path, which is rel under the directory dir
// (an O_PATH descriptor; -1: path is opened whole).
//
// perf: a group's files are five to ten directories down from the root;
// from podvisor's run directory the kernel looks up two names, not all of
// them, at each write that makes a group (docs/BENCHMARKS.md section 32).
func writeFileAt(dir int, rel, path, value string) error {
	if dir < 0 {
		return writeFile(path, value)
	}
	fd, err := openAt(dir, rel, path, unix.O_WRONLY)
	if err != nil {
		return err
	}
	return writeFD(fd, path, value)
}

// openFile opens path by system call (see writeFile), with an *os.PathError.
func openFile(path string, mode int) (int, error) {
	return openAt(unix.AT_FDCWD, path, path, mode)
}

// openAt opens rel under dir (path names it in errors).
func openAt(dir int, rel, path string, mode int) (int, error) {
	for {
		fd, err := unix.Openat(dir, rel, mode|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// readFile reads a cgroup file whole, by system call (see writeFile).
func readFile(path string) ([]byte, error) {
	fd, err := openFile(path, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// readInt reads a file holding one number ("max" reads as -1).
func readInt(path string) (int64, error) {
	b, err := readFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// readKey reads the number after key in a flat keyed file ("oom_kill 3").
func readKey(path, key string) (uint64, error) {
	b, err := readFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

// readPids reads a cgroup.procs or tasks file.
func readPids(path string) ([]int, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// OwnPaths parses /proc/self/cgroup: the v2 path ("" if none) and the v1
// path of each controller.
func OwnPaths(procSelfCgroup string) (v2 string, v1 map[string]string, err error) {
	b, err := os.ReadFile(procSelfCgroup)
	if err != nil {
		return "", nil, err
	}
	v1 = map[string]string{}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	return v2, v1, nil
}

// ownDir is where a cgroup path lies under a mount: the path itself, or
// the mount's root when the path is not there (a cgroup namespace, or a
// container runtime that mounted its own cgroup as the root).
func ownDir(mount, path string) string {
	clean := filepath.Join("/", path) // no ".." above the mount
	if d := filepath.Join(mount, clean); isDir(d) {
		return d
	}
	return mount
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// mkdir makes a cgroup directory; one left from before is reused.
func mkdir(p string) error {
	_, err := mkdirFresh(p)
	return err
}

// mkdirFresh makes directory p unless it exists; fresh says it was made now.
func mkdirFresh(p string) (fresh bool, err error) {
	return mkdirFreshAt(unix.AT_FDCWD, p, p)
}

// mkdirFreshAt is mkdirFresh of p, which is rel under the directory dir
// (-1: p is made whole; see writeFileAt).
func mkdirFreshAt(dir int, rel, p string) (fresh bool, err error) {
	if dir < 0 {
		dir, rel = unix.AT_FDCWD, p
	}
	for {
		err = unix.Mkdirat(dir, rel, 0o755)
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case err == unix.EEXIST:
		return false, nil
	case err != nil:
		return false, &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	return true, nil
}

// reason turns a file system error into why limits cannot be enforced.
func reason(err error) string {
	switch {
	case errors.Is(err, os.ErrPermission):
		return "no write access to podvisor's cgroup (" + err.Error() + "); give the container a writable cgroup (docs/resources.md)"
	case strings.Contains(err.Error(), "read-only file system"):
		return "/sys/fs/cgroup is mounted read-only; give the container a writable cgroup (docs/resources.md)"
	}
	return err.Error()
}
