package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The v1 controllers podvisor uses: limits (memory, cpu, pids) and
// accounting (memory, cpuacct). A tree is stopped without the freezer
// (Group.Kill).
var v1Controllers = []string{"memory", "cpu", "cpuacct", "pids"}

// Hierarchy is where podvisor makes its processes' cgroups.
type Hierarchy struct {
	v2 bool
	// v2: podvisor's own cgroup, whose children are the processes' (and
	// podvisor's own leaf). v1: per controller, the run's directory under
	// podvisor's own cgroup.
	base map[string]string
	// baseFD holds base's directories open (O_PATH), for New and Remove
	// to name a group's files from there (writeFileAt); fdMu keeps Close
	// from closing one while it is used (its number could be reused).
	fdMu   sync.RWMutex
	baseFD map[string]int
	own    map[string]string // v1: podvisor's own cgroup per controller
	real   map[string]string // v1: each controller's mount, symlinks resolved (co-mounted ones share it)
	// Missing says which limits cannot be enforced and why, by limit
	// ("memory", "cpu", "pids"); empty when all can.
	Missing map[string]string
	// PidsBudget is the most tasks a process's cgroup may be given so
	// that podvisor keeps spare ones under its own limit; 0: no limit above.
	PidsBudget int64
	// self is podvisor's pid: v1 lists a process in a group while one of
	// its threads is there, and a spawner thread stays in the group of
	// the last child it forked while spawns are waiting (Group.Enter), so
	// a group's members never include podvisor itself (Group.Pids).
	self int
	// Stale says what Open found of cgroups an earlier podvisor left
	// behind (killed before it could remove them): Removed the empty ones
	// it removed, Busy those that still hold processes, left alone.
	Stale struct {
		Removed int
		Busy    []string
	}
}

// ownReserve is the tasks podvisor keeps for itself below its own cgroup's
// pids limit: its threads, exec probes and stop commands.
const ownReserve = 64

// V2 reports whether the hierarchy is cgroup v2.
func (h *Hierarchy) V2() bool { return h.v2 }

// Open finds podvisor's own cgroup under root ("/sys/fs/cgroup") from
// procSelfCgroup ("/proc/self/cgroup") and prepares it for process cgroups;
// pid is podvisor's. On v2 it moves podvisor's processes into a leaf of
// their own and enables the controllers for its children. It fails, saying
// why, when nothing can be enforced.
func Open(root, procSelfCgroup string, pid int) (*Hierarchy, error) {
	v2path, v1paths, err := OwnPaths(procSelfCgroup)
	if err != nil {
		return nil, err
	}
	var h *Hierarchy
	switch _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); {
	case err == nil:
		h, err = openV2(ownDir(root, v2path))
		if err != nil {
			return nil, err
		}
	case len(v1paths) == 0:
		return nil, errors.New("no cgroup hierarchy found under " + root)
	default:
		if h, err = openV1(root, v1paths, pid); err != nil {
			return nil, err
		}
	}
	h.self = pid
	h.baseFD = map[string]int{}
	for c, d := range h.base {
		if fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			h.baseFD[c] = fd
		}
	}
	return h, nil
}

// at runs f with the descriptor of controller c's base directory, -1 if
// none (the group's paths are then used whole).
func (h *Hierarchy) at(c string, f func(dir int) error) error {
	h.fdMu.RLock()
	defer h.fdMu.RUnlock()
	if fd, ok := h.baseFD[c]; ok {
		return f(fd)
	}
	return f(-1)
}

// Stale cgroups. A podvisor that is SIGKILLed leaves its processes'
// cgroups behind. They are recognised by their names: on v2 the
// processes' groups are the "p-" children of podvisor's own cgroup,
// which podvisor owns whole; on v1 each run's groups are in
// "podvisor-PID", and a run is stale when no process PID exists (or
// PID is podvisor's own: a podvisor restarted as PID 1 of a container).
// Only empty groups are removed (rmdir refuses the others); a group that
// still holds a process is named in Stale.Busy and left alone.

// removeStale removes the empty groups in dir whose names pass match,
// and dir itself when rmDir and nothing is left in it.
func (h *Hierarchy) removeStale(dir string, match func(name string) bool, rmDir bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !match(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err == nil {
			h.Stale.Removed++
		} else if !errors.Is(err, os.ErrNotExist) {
			h.Stale.Busy = append(h.Stale.Busy, p)
		}
	}
	if rmDir {
		_ = os.Remove(dir) // fails while a busy group is left in it
	}
}

// staleRun reports whether a v1 run directory "podvisor-PID" is stale for
// a podvisor of pid self.
func staleRun(name string, self int) bool {
	n, ok := strings.CutPrefix(name, "podvisor-")
	if !ok {
		return false
	}
	p, err := strconv.Atoi(n)
	if err != nil || p <= 0 {
		return false
	}
	return p == self || errors.Is(unix.Kill(p, 0), unix.ESRCH)
}

func openV2(own string) (*Hierarchy, error) {
	h := &Hierarchy{v2: true, base: map[string]string{"": own}, Missing: map[string]string{}}
	// The root of the hierarchy (podvisor as a machine's init) has no
	// cgroup.type: it is exempt from the no-internal-processes rule, and
	// its kernel threads cannot be moved (EINVAL), so podvisor stays there.
	if _, err := os.Stat(filepath.Join(own, "cgroup.type")); err == nil {
		if err := intoLeaf(own); err != nil {
			return nil, err
		}
	}
	b, err := os.ReadFile(filepath.Join(own, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	h.removeStale(own, func(n string) bool { return strings.HasPrefix(n, "p-") }, false)
	have := strings.Fields(string(b))
	var enable []string
	for _, c := range []string{"memory", "cpu", "pids"} {
		if slices.Contains(have, c) {
			enable = append(enable, "+"+c)
		} else {
			h.Missing[c] = "the " + c + " controller is not delegated to podvisor's cgroup " + own
		}
	}
	if len(enable) > 0 {
		if err := writeFile(filepath.Join(own, "cgroup.subtree_control"), strings.Join(enable, " ")); err != nil {
			return nil, errors.New(reason(err))
		}
	}
	h.PidsBudget = budget(filepath.Join(own, "pids.max"))
	return h, nil
}

// intoLeaf moves everything in the v2 cgroup own (podvisor, children
// started before) into its leaf "podvisor": no internal processes, so
// this comes before the controllers are enabled for the children.
func intoLeaf(own string) error {
	leaf := filepath.Join(own, "podvisor")
	if err := mkdir(leaf); err != nil {
		return errors.New(reason(err))
	}
	for range 10 {
		pids, err := readPids(filepath.Join(own, "cgroup.procs"))
		if err != nil || len(pids) == 0 {
			break
		}
		for _, p := range pids {
			if err := writeFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(p)); err != nil && !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "no such process") {
				return errors.New(reason(err))
			}
		}
	}
	return nil
}

func openV1(root string, paths map[string]string, pid int) (*Hierarchy, error) {
	h := &Hierarchy{base: map[string]string{}, own: map[string]string{}, real: map[string]string{}, Missing: map[string]string{}}
	run := "podvisor-" + strconv.Itoa(pid)
	var firstErr error
	swept := map[string]bool{}
	for _, c := range v1Controllers {
		p, ok := paths[c]
		mount := filepath.Join(root, c)
		if !ok || !isDir(mount) {
			h.missing(c, "the "+c+" controller is not mounted under "+root)
			continue
		}
		h.real[c] = mount
		if r, err := filepath.EvalSymlinks(mount); err == nil {
			h.real[c] = r // cpu and cpuacct are often one mount, two names
		}
		own := ownDir(mount, p)
		if !swept[h.real[c]] {
			swept[h.real[c]] = true
			for _, e := range readDirNames(own) {
				if staleRun(e, pid) {
					h.removeStale(filepath.Join(own, e), func(string) bool { return true }, e != run)
				}
			}
		}
		base := filepath.Join(own, run)
		if err := mkdir(base); err != nil {
			firstErr = cmpOr(firstErr, err)
			h.missing(c, reason(err))
			continue
		}
		h.own[c], h.base[c] = own, base
	}
	if len(h.base) == 0 {
		return nil, fmt.Errorf("%s", reason(firstErr))
	}
	if own, ok := h.own["pids"]; ok {
		h.PidsBudget = budget(filepath.Join(own, "pids.max"))
	}
	return h, nil
}

func readDirNames(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// missing records that controller c is unusable: the limit it enforces is
// not (cpuacct only costs the CPU accounting).
func (h *Hierarchy) missing(c, why string) {
	switch c {
	case "memory", "cpu", "pids":
		h.Missing[c] = why
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// budget is the pids limit of podvisor's own cgroup less its reserve, or 0
// when it has none.
func budget(pidsMax string) int64 {
	v, err := readInt(pidsMax)
	if err != nil || v < 0 {
		return 0
	}
	return max(v-ownReserve, 1)
}

// Close removes the run's directories (v1) once their groups are gone.
func (h *Hierarchy) Close() error {
	h.fdMu.Lock()
	for c, fd := range h.baseFD {
		unix.Close(fd)
		delete(h.baseFD, c)
	}
	h.fdMu.Unlock()
	if h.v2 {
		return nil
	}
	var errs []error
	for _, d := range h.base {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
