package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Group is one process's cgroup: a directory (v2) or one per controller (v1).
type Group struct {
	h    *Hierarchy
	dirs map[string]string // v2: "" -> dir; v1: controller -> dir
	// v1: the tasks files a spawner thread enters by, each with the one
	// it goes back by (co-mounted controllers share one), and pids.max.
	enter, home []string
	pidsMax     string
	fd          int    // v2: the directory, for CLONE_INTO_CGROUP; else -1
	pids        int64  // v1: pids.max, written once the spawner thread has left
	base        Events // counters when it was made (a reused directory)
	rel         string // each directory's name under its controller's base
}

// v1Needs lists the v1 controllers a group with lim is made in: the ones
// its limits need, pids also when podvisor keeps a budget (every group is
// then limited), and memory always, so that its memory is read from the
// cgroup, exact for the whole tree, and its OOM kills are counted.
// cpuacct (the tree's CPU time) only where it is the same hierarchy as a
// cpu directory made anyway (cpu,cpuacct mounted together, as systemd
// does): mounted apart it would cost a directory and two writes at every
// start for the accounting alone, and the /proc walk counts the CPU time
// instead (docs/resources.md, docs/BENCHMARKS.md section 32). Each
// controller costs a directory and a write at every start (section 26);
// the freezer is not used (Kill).
func (h *Hierarchy) v1Needs(lim Limits) []string {
	out := []string{"memory"}
	if lim.CPUMax > 0 || lim.CPUWeight > 0 {
		out = append(out, "cpu")
		if r := h.real["cpu"]; r != "" && h.real["cpuacct"] == r {
			out = append(out, "cpuacct")
		}
	}
	if lim.PidsMax > 0 {
		out = append(out, "pids")
	}
	return out
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
	ctrls := []string{""}
	if !h.v2 {
		ctrls = h.v1Needs(lim)
	}
	made := map[string]bool{}
	reused := false
	for _, c := range ctrls {
		b, ok := h.base[c]
		if !ok {
			continue // not mounted or not writable: Missing says so
		}
		g.rel = name
		if c == "" {
			g.rel = "p-" + name // beside podvisor's own leaf
		}
		b = filepath.Join(b, g.rel)
		if c != "" && made[h.real[c]] {
			g.dirs[c] = b // co-mounted with one made already: the same directory
			continue
		}
		var fresh bool
		err := h.at(c, func(dir int) (err error) {
			fresh, err = mkdirFreshAt(dir, g.rel, b)
			return err
		})
		if err != nil {
			g.Remove()
			return nil, errors.New(reason(err))
		}
		reused = reused || !fresh
		g.dirs[c] = b
		if c != "" {
			made[h.real[c]] = true
			g.enter = append(g.enter, filepath.Join(b, "tasks"))
			g.home = append(g.home, filepath.Join(h.own[c], "tasks"))
		}
	}
	if d, ok := g.dirs["pids"]; ok && !h.v2 {
		g.pidsMax = filepath.Join(d, "pids.max")
	}
	if len(g.dirs) == 0 {
		return nil, errors.New("no cgroup controller podvisor can use is mounted")
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
	if reused {
		// perf: a directory made now counts nothing yet; only one left
		// from before (a name used again) is read.
		g.base = g.Events()
	}
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
			// The spawner thread counts while it forks (Enter): with a
			// limit of 1 the fork itself needs one more (settle).
			{"pids", "pids.max", itoa(v1PidsAtFork(lim.PidsMax)), lim.PidsMax > 0},
		}
	}
	for _, f := range files {
		d, ok := g.dirs[f.ctrl]
		if !f.set || !ok {
			continue
		}
		err := g.h.at(f.ctrl, func(dir int) error {
			return writeFileAt(dir, g.rel+"/"+f.name, filepath.Join(d, f.name), f.value)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Dir is the group's directory of a v1 controller ("" for v2's one
// directory), or "" when it has none there.
func (g *Group) Dir(controller string) string { return g.dirs[controller] }

// FD is the v2 directory for CLONE_INTO_CGROUP, or -1 on v1.
func (g *Group) FD() int { return g.fd }

// Enter moves the calling thread into the group (v1, where membership is
// per thread, so a child forked from it starts inside) and returns settle,
// to call just after the fork: it puts pids.max in place. The caller must
// hold its OS thread locked. The thread stays in the group until it
// enters another group with the same Homes (one write per controller
// moves it there directly) or goes Home; proc's spawner threads go home
// when no spawn is waiting (internal/proc, spawners_linux.go). On an
// error the thread has gone home.
//
// perf: the thread is named "0" (the writer itself), not by its id: the
// kernel then moves it without taking the lock that keeps whole thread
// groups still, whose write side waits for an RCU grace period (0.5 to
// several ms on a loaded machine, at each of the writes). A move from one
// process's group straight to the next one's spares the two writes home
// and back of every start in a burst (docs/BENCHMARKS.md section 32).
func (g *Group) Enter() (settle func(), err error) {
	for _, tasks := range g.enter {
		if err := writeFile(tasks, "0"); err != nil {
			g.Home()
			return nil, err
		}
	}
	return g.settle, nil
}

// settle puts pids.max at the limit once the fork is done, if it was made
// higher for the fork (v1PidsAtFork): while the thread is still counted,
// the child's tree can never hold more than pids.max (it holds one less
// until the thread leaves).
func (g *Group) settle() {
	if g.pidsMax != "" && g.pids > 0 && v1PidsAtFork(g.pids) != g.pids {
		_ = writeFile(g.pidsMax, itoa(g.pids))
	}
}

// v1PidsAtFork is the pids.max a v1 group is made with for a limit of
// max: the spawner thread and the child are two tasks at the fork, so a
// limit of 1 is made 2 and put back by settle. A limit of 2 or more
// already lets the fork through: no write at each start (perf); the
// tree then holds one task less while the thread is in the group.
func v1PidsAtFork(max int64) int64 {
	if max == 1 {
		return 2
	}
	return max
}

// Home moves the calling thread back into podvisor's own cgroups, of
// every controller the group is in.
func (g *Group) Home() {
	for _, home := range g.home {
		_ = writeFile(home, "0")
	}
}

// Stay reports whether a spawner thread may stay in the group after its
// fork (Enter). Not in a cpu directory: the thread would run under the
// child's CPU quota, and a child throttled at once would stall the next
// start for up to a period (100 ms).
func (g *Group) Stay() bool {
	_, cpu := g.dirs["cpu"]
	return !cpu
}

// Homes names the controllers a thread in the group is moved through: a
// thread in one group may enter another with the same Homes directly.
func (g *Group) Homes() string { return strings.Join(g.home, "\x00") }

// procsFile is the file listing the group's processes (for v1, any
// controller's: each holds the whole tree).
func (g *Group) procsFile() string {
	for _, c := range []string{"", "pids", "memory", "cpuacct", "cpu"} {
		if d, ok := g.dirs[c]; ok {
			return filepath.Join(d, "cgroup.procs")
		}
	}
	return ""
}

// Pids lists the group's processes, podvisor's own excepted (a spawner
// thread of its may be in the group: Enter).
func (g *Group) Pids() []int {
	p, _ := readPids(g.procsFile())
	return slices.DeleteFunc(p, func(pid int) bool { return pid == g.h.self && pid != 0 })
}

// Empty reports whether no process is left in the group.
func (g *Group) Empty() bool { return len(g.Pids()) == 0 }

// Kill SIGKILLs every process in the group, those that left the process
// group or session included, and returns how many it found: cgroup.kill
// on v2 (and before Linux 5.14), on v1 the group's list is read and every
// process in it killed until a reading finds none not killed yet, as
// systemd does: a new process can only come from one not yet killed (a
// process with SIGKILL pending cannot fork), and pids.max bounds the
// rounds a fork bomb can add. No freezer directory is needed for it.
func (g *Group) Kill() (int, error) {
	if g.h.v2 {
		pids := g.Pids()
		if len(pids) == 0 {
			return 0, nil
		}
		if err := writeFile(filepath.Join(g.dirs[""], "cgroup.kill"), "1"); err == nil {
			return len(pids), nil
		}
	}
	killed := map[int]bool{}
	var errs []error
	for range maxKillRounds {
		fresh := 0
		for _, p := range g.Pids() {
			if killed[p] {
				continue
			}
			killed[p] = true
			fresh++
			if err := unix.Kill(p, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
				errs = append(errs, fmt.Errorf("kill %d: %w", p, err))
			}
		}
		if fresh == 0 {
			break
		}
	}
	return len(killed), errors.Join(errs...)
}

// maxKillRounds bounds Kill's readings of a group that never runs dry.
const maxKillRounds = 1000

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
// group cannot tell (the caller falls back to /proc). A v1 group without
// a cpuacct directory (v1Needs) knows its memory only: CPUKnown is false.
func (g *Group) Usage() (u Usage, ok bool) {
	var err error
	if g.h.v2 {
		if u.Memory, err = readInt(filepath.Join(g.dirs[""], "memory.current")); err != nil {
			return Usage{}, false
		}
		us, err := readKey(filepath.Join(g.dirs[""], "cpu.stat"), "usage_usec")
		if err != nil {
			return Usage{}, false
		}
		u.CPU, u.CPUKnown = time.Duration(us)*time.Microsecond, true
		return u, true
	}
	if u.Memory, err = readInt(filepath.Join(g.dirs["memory"], "memory.usage_in_bytes")); err != nil {
		return Usage{}, false
	}
	if d, ok := g.dirs["cpuacct"]; ok {
		ns, err := readInt(filepath.Join(d, "cpuacct.usage"))
		if err != nil {
			return Usage{}, false
		}
		u.CPU, u.CPUKnown = time.Duration(ns), true
	}
	return u, true
}

// Remove deletes the group's directories; it fails while a process is in it.
func (g *Group) Remove() error {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	var errs []error
	for c, d := range g.dirs {
		// perf: rmdir alone (os.Remove tries unlink first), from the
		// base directory (writeFileAt).
		err := g.h.at(c, func(dir int) error {
			rel := g.rel
			if dir < 0 {
				dir, rel = unix.AT_FDCWD, d
			}
			return unix.Unlinkat(dir, rel, unix.AT_REMOVEDIR)
		})
		if err != nil && err != unix.ENOENT {
			errs = append(errs, &os.PathError{Op: "rmdir", Path: d, Err: err})
		}
	}
	return errors.Join(errs...)
}
