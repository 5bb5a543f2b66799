package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// pid1Port is the HTTP port of the VM's own podvisor (test/vm's
// pid1Config).
const pid1Port = 8080

// pid1: podvisor is the init of a real kernel: PID 1, the parent of its
// job, the reaper of orphans, and the owner of the root of the cgroup
// hierarchy: it stays in the root (exempt from the no-internal-processes
// rule, and its kernel threads cannot move), enables the controllers for
// its children and puts the sentinel in p-sentinel.1 with its limits.
func pid1(r *reporter) {
	start := time.Now()
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	exe, _ := os.Readlink("/proc/1/exe")
	var err error
	switch {
	case os.Getppid() != 1:
		err = fmt.Errorf("the guest's parent is %d, not PID 1", os.Getppid())
	case exe != "/bin/podvisor":
		err = fmt.Errorf("PID 1 is %q, not /bin/podvisor", exe)
	}
	r.result("pid1", start, "podvisor is PID 1 of Linux "+unix.ByteSliceToString(uts.Release[:])+" and the guest's parent", err)

	start = time.Now()
	detail, err := reaps()
	r.result("pid1-reaps", start, detail, err)

	start = time.Now()
	detail, err = pid1Cgroup()
	r.result("pid1-cgroup", start, detail, err)
}

// reaps orphans a process (its shell exits), checks that it became PID
// 1's child, kills it, and waits for PID 1 to reap it.
func reaps() (string, error) {
	const mark = "900001"
	if out, err := exec.Command("/bin/sh", "-c", "sleep "+mark+" >/dev/null 2>&1 &").CombinedOutput(); err != nil {
		return "", fmt.Errorf("sh: %v %s", err, out)
	}
	pid, err := onePid(mark)
	if err != nil {
		return "", err
	}
	if !eventually(10*time.Second, func() bool { pp, _ := stat(pid, 4); return pp == 1 }) {
		pp, _ := stat(pid, 4)
		return "", fmt.Errorf("the orphan %d has parent %d, not PID 1", pid, pp)
	}
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		return "", err
	}
	gone := func() bool { _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); return errors.Is(err, os.ErrNotExist) }
	if !eventually(10*time.Second, gone) {
		return "", fmt.Errorf("the orphan %d was not reaped by PID 1: %s", pid, read(fmt.Sprintf("/proc/%d/stat", pid)))
	}
	return fmt.Sprintf("orphan %d reparented to PID 1 and reaped after SIGKILL", pid), nil
}

// pid1Cgroup checks the cgroups the VM's podvisor made at the root of the
// hierarchy for its sentinel process.
func pid1Cgroup() (string, error) {
	p, err := process(pid1Port, "sentinel")
	if err != nil {
		return "", err
	}
	sc := filepath.Join(cgroupRoot, "p-sentinel.1")
	errs := []error{
		want("/proc/1/cgroup", "0::/"),
		hasAll(filepath.Join(cgroupRoot, "cgroup.subtree_control"), "cpu", "memory", "pids"),
		want(filepath.Join(sc, "memory.max"), "16777216"),
		want(filepath.Join(sc, "cpu.max"), "10000 100000"),
		want(filepath.Join(sc, "pids.max"), "8"),
		inCgroup(p.Pid, "/p-sentinel.1"),
	}
	if p.ResourcesNotEnforced != "" {
		errs = append(errs, fmt.Errorf("/status: sentinel's resources not enforced: %s", p.ResourcesNotEnforced))
	}
	return fmt.Sprintf("PID 1 in /; root subtree_control %q; sentinel %d in /p-sentinel.1 (memory.max 16Mi, cpu.max 10000 100000, pids.max 8); the guest in %s",
		read(filepath.Join(cgroupRoot, "cgroup.subtree_control")), p.Pid, ownCgroup(os.Getpid())), errors.Join(errs...)
}

// hasAll checks that a space-separated file lists every word.
func hasAll(path string, words ...string) error {
	got := strings.Fields(read(path))
	for _, w := range words {
		if !slices.Contains(got, w) {
			return fmt.Errorf("%s is %q: no %s", path, read(path), w)
		}
	}
	return nil
}

// inCgroup checks that pid is in the v2 cgroup path (and listed there).
func inCgroup(pid int, path string) error {
	if got := ownCgroup(pid); got != path {
		return fmt.Errorf("process %d is in %s, want %s", pid, got, path)
	}
	if !slices.Contains(strings.Fields(read(filepath.Join(cgroupRoot, path, "cgroup.procs"))), strconv.Itoa(pid)) {
		return fmt.Errorf("process %d is not in %s/cgroup.procs", pid, path)
	}
	return nil
}
