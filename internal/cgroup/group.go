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

// Group is one process's cgroup: a directory (v2) or one per controller (v1).
type Group struct {
	h    *Hierarchy
	dirs map[string]string // v2: "" -> dir; v1: controller -> dir
	fd   int               // v2: the directory, for CLONE_INTO_CGROUP; else -1
	pids int64             // v1: pids.max, written once the spawner thread has left
	base Events            // counters when it was made (a reused directory)
}

// New makes the cgroup name (a process name and its incarnation) with lim.
func (h *Hierarchy) New(name string, lim Limits) (*Group, error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return nil, fmt.Errorf("invalid cgroup name %q", name)
	}
	if h.PidsBudget > 0 && (lim.PidsMax == 0 || lim.PidsMax > h.PidsBudget) {
		lim.PidsMax = h.PidsBudget // podvisor keeps its own threads (docs/resources.md)
	}
	g := &Group{h: h, dirs: map[string]string{}, fd: -1, pids: lim.PidsMax}
	for c, b := range h.base {
		if c == "" {
			b = filepath.Join(b, "p-"+name) // beside podvisor's own leaf
		} else {
			b = filepath.Join(b, name)
		}
		if err := mkdir(b); err != nil {
			g.Remove()
			return nil, errors.New(reason(err))
		}
		g.dirs[c] = b
	}
	if err := g.limit(lim); err != nil {
		g.Remove()
		return nil, err
	}
	if h.v2 {
		fd, err := unix.Open(g.dirs[""], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			g.Remove()
			return nil, fmt.Errorf("open %s: %w", g.dirs[""], err)
		}
		g.fd = fd
	}
	g.base = g.Events()
	return g, nil
}

// limit writes lim's files.
func (g *Group) limit(lim Limits) error {
	type file struct {
		ctrl, name, value string
		set               bool
	}
	// On v2 one directory holds every controller's files: a controller
	// that is not delegated has none (Hierarchy.Missing).
	v2 := func(name, value string, set bool) file {
		c, _, _ := strings.Cut(name, ".")
		_, missing := g.h.Missing[c]
		return file{"", name, value, set && !missing}
	}
	var files []file
	if g.h.v2 {
		files = []file{
			v2("memory.max", itoa(lim.MemoryMax), lim.MemoryMax > 0),
			v2("memory.high", itoa(lim.MemoryHigh), lim.MemoryHigh > 0),
			v2("memory.oom.group", "1", lim.MemoryMax > 0), // the tree dies together
			v2("cpu.max", itoa(quota(lim.CPUMax))+" "+itoa(cpuPeriod), lim.CPUMax > 0),
			v2("cpu.weight", itoa(lim.CPUWeight), lim.CPUWeight > 0),
			v2("pids.max", itoa(lim.PidsMax), lim.PidsMax > 0),
		}
	} else {
		files = []file{
			{"memory", "memory.limit_in_bytes", itoa(lim.MemoryMax), lim.MemoryMax > 0},
			{"memory", "memory.soft_limit_in_bytes", itoa(lim.MemoryHigh), lim.MemoryHigh > 0},
			{"cpu", "cpu.cfs_period_us", itoa(cpuPeriod), lim.CPUMax > 0},
			{"cpu", "cpu.cfs_quota_us", itoa(quota(lim.CPUMax)), lim.CPUMax > 0},
			{"cpu", "cpu.shares", itoa(shares(lim.CPUWeight)), lim.CPUWeight > 0},
			// The spawner thread counts while it forks (Enter): one more.
			{"pids", "pids.max", itoa(lim.PidsMax + 1), lim.PidsMax > 0},
		}
	}
	for _, f := range files {
		d, ok := g.dirs[f.ctrl]
		if !f.set || !ok {
			continue
		}
		if err := writeFile(filepath.Join(d, f.name), f.value); err != nil {
			return err
		}
	}
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// FD is the v2 directory for CLONE_INTO_CGROUP, or -1 on v1.
func (g *Group) FD() int { return g.fd }

// Enter moves the calling thread into the group (v1, where membership is
// per thread, so a child forked from it starts inside); leave moves it back
// and puts pids.max in place. The caller must hold its OS thread locked.
func (g *Group) Enter() (leave func(), err error) {
	tid := strconv.Itoa(unix.Gettid())
	var entered []string
	leave = func() {
		// The limit first: while the thread is still counted, the
		// child's tree can never hold more than pids.max.
		if d, ok := g.dirs["pids"]; ok && g.pids > 0 {
			_ = writeFile(filepath.Join(d, "pids.max"), itoa(g.pids))
		}
		for _, c := range entered {
			_ = writeFile(filepath.Join(g.h.own[c], "tasks"), tid)
		}
	}
	for c, d := range g.dirs {
		if err := writeFile(filepath.Join(d, "tasks"), tid); err != nil {
			leave()
			return nil, err
		}
		entered = append(entered, c)
	}
	return leave, nil
}

// procsFile is the file listing the group's processes (for v1, the
// freezer's, or any).
func (g *Group) procsFile() string {
	for _, c := range []string{"", "freezer", "pids", "memory", "cpu", "cpuacct"} {
		if d, ok := g.dirs[c]; ok {
			return filepath.Join(d, "cgroup.procs")
		}
	}
	return ""
}

// Pids lists the group's processes.
func (g *Group) Pids() []int {
	p, _ := readPids(g.procsFile())
	return p
}

// Empty reports whether no process is left in the group.
func (g *Group) Empty() bool { return len(g.Pids()) == 0 }

// Kill SIGKILLs every process in the group, those that left the process
// group or session included, and returns how many it found: cgroup.kill
// on v2; on v1 the tree is frozen first, so none can fork away meanwhile.
func (g *Group) Kill() (int, error) {
	pids := g.Pids()
	if len(pids) == 0 {
		return 0, nil
	}
	if g.h.v2 {
		if err := writeFile(filepath.Join(g.dirs[""], "cgroup.kill"), "1"); err == nil {
			return len(pids), nil
		}
		return len(pids), killAll(pids) // before Linux 5.14
	}
	fz, ok := g.dirs["freezer"]
	if !ok {
		return len(pids), killAll(pids)
	}
	if err := writeFile(filepath.Join(fz, "freezer.state"), "FROZEN"); err != nil {
		return len(pids), killAll(pids)
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(fz, "freezer.state"))
		if string(b) == "FROZEN\n" {
			break
		}
		time.Sleep(time.Millisecond) // the kernel offers no wake-up for this
	}
	pids = g.Pids()
	err := killAll(pids)
	return len(pids), errors.Join(err, writeFile(filepath.Join(fz, "freezer.state"), "THAWED"))
}

func killAll(pids []int) error {
	var errs []error
	for _, p := range pids {
		if err := unix.Kill(p, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Events reads what the kernel refused the group since it was made.
func (g *Group) Events() Events {
	var e Events
	if g.h.v2 {
		e.OOMKills, _ = readKey(filepath.Join(g.dirs[""], "memory.events"), "oom_kill")
		e.ForkFailures, _ = readKey(filepath.Join(g.dirs[""], "pids.events"), "max")
	} else {
		if d, ok := g.dirs["memory"]; ok {
			e.OOMKills, _ = readKey(filepath.Join(d, "memory.oom_control"), "oom_kill")
		}
		if d, ok := g.dirs["pids"]; ok {
			e.ForkFailures, _ = readKey(filepath.Join(d, "pids.events"), "max")
		}
	}
	e.OOMKills -= min(e.OOMKills, g.base.OOMKills)
	e.ForkFailures -= min(e.ForkFailures, g.base.ForkFailures)
	return e
}

// Usage reads the group's memory and CPU time; ok is false when the
// group cannot tell (the caller falls back to /proc).
func (g *Group) Usage() (u Usage, ok bool) {
	var mem, cpu int64
	var err1, err2 error
	if g.h.v2 {
		mem, err1 = readInt(filepath.Join(g.dirs[""], "memory.current"))
		var us uint64
		us, err2 = readKey(filepath.Join(g.dirs[""], "cpu.stat"), "usage_usec")
		cpu = int64(us) * 1000
	} else {
		mem, err1 = readInt(filepath.Join(g.dirs["memory"], "memory.usage_in_bytes"))
		cpu, err2 = readInt(filepath.Join(g.dirs["cpuacct"], "cpuacct.usage"))
	}
	if err1 != nil || err2 != nil {
		return Usage{}, false
	}
	return Usage{Memory: mem, CPU: time.Duration(cpu)}, true
}

// Remove deletes the group's directories; it fails while a process is in it.
func (g *Group) Remove() error {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	var errs []error
	for _, d := range g.dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
