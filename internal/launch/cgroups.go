package launch

import (
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/cgroup"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// Cgroups makes the cgroups of the processes that ask for resources
// (docs/resources.md). Nothing is done until the config is planned (Plan)
// or the first start, and only for a process with resources: a run
// without resources never looks at a cgroup. The groups are made ahead
// of their starts and removed after their exits by a goroutine of their
// own (cgroupowner.go).
type Cgroups struct {
	Log              *slog.Logger
	Root, SelfCgroup string // "": /sys/fs/cgroup and /proc/self/cgroup

	mu     sync.Mutex
	opened bool // also once closed: nothing is opened after Close
	h      *cgroup.Hierarchy
	own    *groupOwner     // makes and removes the groups, once h is open
	why    string          // why nothing is enforced, when h is nil
	told   map[string]bool // processes told what is not enforced
	unenf  map[string]string
	groups map[string]*cgroup.Group // the current incarnation's, by process
	ending atomic.Bool              // the teardown began (Teardown)
}

// NewCgroups returns a Cgroups that opens the hierarchy on first use.
func NewCgroups(log *slog.Logger) *Cgroups { return &Cgroups{Log: log} }

func (c *Cgroups) open() {
	if c.opened {
		return
	}
	c.opened = true
	root, self := c.Root, c.SelfCgroup
	if root == "" {
		root, self = "/sys/fs/cgroup", "/proc/self/cgroup"
	}
	h, err := cgroup.Open(root, self, os.Getpid())
	if err != nil {
		c.why = err.Error()
		c.log().Warn("resources are not enforced: podvisor cannot make cgroups", "why", c.why)
		return
	}
	c.h = h
	c.own = newGroupOwner(h)
	for _, k := range sortedKeys(h.Missing) {
		c.log().Warn("resources are not enforced", "limit", k, "why", h.Missing[k])
	}
	if h.Stale.Removed > 0 {
		c.log().Info("removed the empty cgroups an earlier podvisor left", "cgroups", h.Stale.Removed)
	}
	if len(h.Stale.Busy) > 0 {
		c.log().Warn("cgroups an earlier podvisor left still hold processes; they are left alone", "cgroups", h.Stale.Busy)
	}
}

// Plan makes, ahead of their starts, the cgroups of the first incarnation
// of every process in procs that asks for resources, so that the start
// only enters its group. Nothing is done when none asks.
func (c *Cgroups) Plan(procs map[string]*config.Process) {
	if c == nil {
		return
	}
	var names []string
	for name, p := range procs {
		if p.Resources != nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	c.mu.Lock()
	c.open()
	own := c.own
	c.mu.Unlock()
	if own == nil {
		return
	}
	for _, name := range names {
		own.ahead(name, 1, limits(procs[name].Resources))
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (c *Cgroups) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// limits converts p's resources.
func limits(r *config.Resources) cgroup.Limits {
	var l cgroup.Limits
	if m := r.Memory; m != nil {
		l.MemoryMax, l.MemoryHigh = m.Max, m.High
	}
	if cpu := r.CPU; cpu != nil {
		l.CPUMax, l.CPUWeight = cpu.Max, cpu.Weight
	}
	if p := r.Pids; p != nil {
		l.PidsMax = p.Max
	}
	return l
}

// asked lists the limits r asks for, by controller name.
func asked(r *config.Resources) []string {
	var out []string
	if r.Memory != nil {
		out = append(out, "memory")
	}
	if r.CPU != nil {
		out = append(out, "cpu")
	}
	if r.Pids != nil {
		out = append(out, "pids")
	}
	return out
}

// procGroup is a process's cgroup as the launcher uses it; nil is none.
type procGroup struct {
	*cgroup.Group
	p   *config.Process
	gen uint64
}

// child wraps c when it has a cgroup.
func (g *procGroup) child(c supervisor.Child, name string, log *slog.Logger) supervisor.Child {
	if g == nil {
		return c
	}
	return cgroupChild{Child: c, g: g.Group, name: name, log: log}
}

// group makes the cgroup of incarnation gen of p and puts it in spec; nil
// when p asks for no resources or none can be made (said once per
// process, and kept for NotEnforced).
func (c *Cgroups) group(p *config.Process, gen uint64, spec *proc.Spec) *procGroup {
	if c == nil || p.Resources == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open()
	var missing []string
	if c.h == nil {
		missing = []string{c.why}
	} else {
		for _, k := range asked(p.Resources) {
			if why, ok := c.h.Missing[k]; ok {
				missing = append(missing, k+": "+why)
			}
		}
	}
	own := c.own
	c.mu.Unlock()
	var g *cgroup.Group
	if own != nil {
		var err error
		if g, err = own.get(p.Name, gen, limits(p.Resources)); err != nil {
			missing = append(missing, err.Error())
		}
	}
	c.mu.Lock()
	c.note(p.Name, strings.Join(missing, "; "))
	if g == nil {
		return nil
	}
	if c.groups == nil {
		c.groups = map[string]*cgroup.Group{}
	}
	c.groups[p.Name] = g
	spec.Cgroup = g
	return &procGroup{Group: g, p: p, gen: gen}
}

// note records what is not enforced for a process and says it once.
func (c *Cgroups) note(name, why string) {
	if c.unenf == nil {
		c.unenf, c.told = map[string]string{}, map[string]bool{}
	}
	if why == "" {
		delete(c.unenf, name)
		return
	}
	c.unenf[name] = why
	if !c.told[name] {
		c.told[name] = true
		c.log().Warn("resources of the process are not enforced", "process", name, "why", why)
	}
}

// NotEnforced says, per process, which of its resources are not enforced
// and why (for /status); empty when all are.
func (c *Cgroups) NotEnforced(name string) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unenf[name]
}

// Usage is the memory and CPU of name's current cgroup; ok is false when
// it has none (the /proc walk then measures it).
func (c *Cgroups) Usage(name string) (cgroup.Usage, bool) {
	if c == nil {
		return cgroup.Usage{}, false
	}
	c.mu.Lock()
	g := c.groups[name]
	c.mu.Unlock()
	if g == nil {
		return cgroup.Usage{}, false
	}
	return g.Usage()
}

// Figures is Usage in the units internal/resources counts in; cpuOK is
// false where the cgroup knows the memory only (v1 without cpuacct).
func (c *Cgroups) Figures(name string) (cpuSeconds float64, cpuOK bool, memoryBytes uint64, ok bool) {
	u, ok := c.Usage(name)
	return u.CPU.Seconds(), u.CPUKnown, uint64(max(u.Memory, 0)), ok
}

// exited is called at the exit of g's process: its cgroup's OOM kills
// and fork failures are named; g is removed, and the next incarnation's
// group made, off the exit's path.
func (c *Cgroups) exited(name string, pg *procGroup, ex *proc.Exit) {
	if pg == nil {
		return
	}
	g := pg.Group
	ev := g.Events()
	ex.OOMKilled = ev.OOMKills > 0
	if ev.ForkFailures > 0 {
		c.log().Warn("forks refused at the process's pids limit", "process", name, "refused", ev.ForkFailures)
	}
	c.mu.Lock()
	if c.groups[name] == g {
		delete(c.groups, name)
	}
	own := c.own
	c.mu.Unlock()
	own.remove(g) // a daemon still in it: kept, and killed at Close
	if pg.p.Restart.Policy != config.Never && !c.ending.Load() {
		own.ahead(name, pg.gen+1, limits(pg.p.Resources))
	}
}

// Teardown says the run is ending: an exit no longer has its next
// incarnation's group made ahead, and the groups made ahead that no start
// took are removed now (before, each process with a restart policy that
// exited in the teardown had a group made and removed again: 180 to 425
// of 1,000 at a SIGTERM, section 26 of docs/BENCHMARKS.md). A restart in
// the teardown (a sidecar's restart.during_termination) makes its group
// at its start. Safe on a nil Cgroups; must not block (the supervisor's
// loop calls it).
func (c *Cgroups) Teardown() {
	if c == nil {
		return
	}
	c.ending.Store(true)
	c.mu.Lock()
	own := c.own
	c.mu.Unlock()
	if own != nil {
		own.dropAhead()
	}
}

// closeWait bounds how long Close waits for the processes it killed in
// the groups left to be gone, so that the groups can be removed.
const closeWait = time.Second

// Close kills what is left in the groups (the final sweep found it
// already, normally) and removes them, and the groups made ahead.
func (c *Cgroups) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opened = true
	if c.own == nil {
		return
	}
	left := c.own.stop()
	deadline := time.Now().Add(closeWait)
	for _, g := range left {
		if n, _ := g.Kill(); n > 0 {
			c.log().Warn("killed processes left in a cgroup at exit", "processes", n)
		}
		// The kernel says nothing when the last one is gone (v1): ask.
		for g.Remove() != nil && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	_ = c.h.Close()
}

// cgroupChild is a Child in a cgroup: its final SIGKILL kills the whole
// cgroup (a daemon that left the process group too), and its group counts
// as alive while the cgroup has a process.
type cgroupChild struct {
	supervisor.Child
	g    *cgroup.Group
	name string
	log  *slog.Logger
}

func (c cgroupChild) Signal(sig syscall.Signal) error {
	err := c.Child.Signal(sig)
	if sig != syscall.SIGKILL {
		return err
	}
	pids := c.g.Pids()
	n, kerr := c.g.Kill()
	switch {
	case kerr != nil:
		c.log.Warn("cannot kill the process's cgroup", "process", c.name, "err", kerr)
	case n > 0:
		c.log.Warn("killed the process's cgroup", "process", c.name, "processes", n, "pids", pids)
		if errors.Is(err, os.ErrProcessDone) {
			err = nil // its group was gone, what escaped it is killed now
		}
	}
	return err
}

func (c cgroupChild) GroupAlive() bool {
	return c.Child.GroupAlive() || !c.g.Empty()
}
