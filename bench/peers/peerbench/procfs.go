package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// proc is what one /proc/<pid>/stat line tells about a process.
type proc struct {
	pid, ppid int
	state     byte
}

// pids lists every process currently in /proc.
func pids() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// readStat parses /proc/<pid>/stat. The command name sits in parentheses
// and may itself hold spaces or parentheses, so the fields are taken after
// the last ')'.
func readStat(pid int) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("parse /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return proc{}, fmt.Errorf("parse /proc/%d/stat: short line", pid)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, fmt.Errorf("parse /proc/%d/stat: ppid: %w", pid, err)
	}
	return proc{pid: pid, ppid: ppid, state: f[0][0]}, nil
}

// all reads the stat of every process; processes that vanish while the
// scan runs are skipped.
func all() ([]proc, error) {
	ps, err := pids()
	if err != nil {
		return nil, err
	}
	out := make([]proc, 0, len(ps))
	for _, pid := range ps {
		if p, err := readStat(pid); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// tree returns root and all its descendants, found through parent pids.
func tree(root int) ([]proc, error) {
	ps, err := all()
	if err != nil {
		return nil, err
	}
	kids := make(map[int][]proc)
	var top proc
	found := false
	for _, p := range ps {
		kids[p.ppid] = append(kids[p.ppid], p)
		if p.pid == root {
			top, found = p, true
		}
	}
	if !found {
		return nil, fmt.Errorf("process %d is gone", root)
	}
	out := []proc{top}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i].pid]...)
	}
	return out, nil
}

// marker is a command line to look for, in /proc/<pid>/cmdline form: the
// benchmark gives every workload process a unique argv ("sleep 99990001"),
// so counting them needs no knowledge of the supervisor's process tree.
type marker []byte

func newMarker(argv string) marker {
	var b []byte
	for _, a := range strings.Fields(argv) {
		b = append(b, a...)
		b = append(b, 0)
	}
	return b
}

// is reports whether pid currently runs the marked command line. A zombie
// has an empty cmdline, so a dead but unreaped process does not count.
func (m marker) is(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.Equal(b, m)
}

// count returns how many live processes run the marked command line.
func (m marker) count() (int, error) {
	ps, err := pids()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range ps {
		if m.is(pid) {
			n++
		}
	}
	return n, nil
}

// cpuNanos is the CPU time pid's threads have used, from the per-thread
// schedstat (nanoseconds, unlike the 10 ms ticks of /proc/<pid>/stat).
func cpuNanos(pid int) (int64, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("process %d is gone", pid)
	}
	var sum int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just exited
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s: %w", f, err)
		}
		sum += n
	}
	return sum, nil
}

// memKiB returns pid's resident set and proportional set size. PSS splits
// shared pages among their users, so summing it over the many small
// processes of one supervisor (s6-supervise, a shell) does not count the
// shared C library once per process.
func memKiB(pid int) (rss, pss int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, perr := strconv.ParseInt(fields[1], 10, 64)
		if perr != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			rss = v
		case "Pss:":
			pss = v
		}
	}
	return rss, pss, sc.Err()
}

// pidNS identifies the PID namespace pid lives in.
func pidNS(pid int) (string, error) {
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
}
