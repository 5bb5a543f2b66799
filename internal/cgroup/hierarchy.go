package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The v1 controllers podvisor uses: limits (memory, cpu, pids), accounting
// (cpuacct) and stopping a tree (freezer).
var v1Controllers = []string{"memory", "cpu", "cpuacct", "pids", "freezer"}

// Hierarchy is where podvisor makes its processes' cgroups.
type Hierarchy struct {
	v2 bool
	// v2: podvisor's own cgroup, whose children are the processes' (and
	// podvisor's own leaf). v1: per controller, the run's directory under
	// podvisor's own cgroup.
	base map[string]string
	own  map[string]string // v1: podvisor's own cgroup per controller
	// Missing says which limits cannot be enforced and why, by limit
	// ("memory", "cpu", "pids"); empty when all can.
	Missing map[string]string
	// PidsBudget is the most tasks a process's cgroup may be given so
	// that podvisor keeps spare ones under its own limit; 0: no limit above.
	PidsBudget int64
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
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return openV2(ownDir(root, v2path))
	}
	if len(v1paths) == 0 {
		return nil, errors.New("no cgroup hierarchy found under " + root)
	}
	return openV1(root, v1paths, pid)
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
	h := &Hierarchy{base: map[string]string{}, own: map[string]string{}, Missing: map[string]string{}}
	run := "podvisor-" + strconv.Itoa(pid)
	var firstErr error
	for _, c := range v1Controllers {
		p, ok := paths[c]
		mount := filepath.Join(root, c)
		if !ok || !isDir(mount) {
			h.missing(c, "the "+c+" controller is not mounted under "+root)
			continue
		}
		own := ownDir(mount, p)
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

// missing records that controller c is unusable: the limit it enforces is
// not (cpuacct only costs the CPU accounting, freezer the tree kill).
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
