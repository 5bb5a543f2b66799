package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/cgroup"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// runDirV1 is where a Cgroups of this test binary makes its groups in the
// v1 memory hierarchy; it skips where there is none to write.
func runDirV1(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this host is cgroup v2; the v1 layout is tested here")
	}
	_, v1, err := cgroup.OwnPaths("/proc/self/cgroup")
	if err != nil || v1["memory"] == "" {
		t.Skip("no v1 memory cgroup: ", err)
	}
	own := filepath.Join("/sys/fs/cgroup/memory", v1["memory"])
	if _, err := os.Stat(own); err != nil {
		own = "/sys/fs/cgroup/memory" // a cgroup namespace
	}
	return filepath.Join(own, "podvisor-"+strconv.Itoa(os.Getpid()))
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("never: ", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCgroupsAheadAndAfter: the first incarnation's group is made when
// the config is planned, before any start; the start takes that very
// group; after its exit the group is removed and the next incarnation's
// made, off the exit's path; Close removes what is left. A process that
// is never restarted gets no next group.
func TestCgroupsAheadAndAfter(t *testing.T) {
	run := runDirV1(t)
	res := &config.Resources{Memory: &config.MemoryResources{Max: 64 << 20}}
	web := &config.Process{Name: "web", Resources: res}
	job := &config.Process{Name: "job", Resources: res, Restart: config.Restart{Policy: config.Never}}
	plain := &config.Process{Name: "plain"}
	c := NewCgroups(nil)
	c.Plan(map[string]*config.Process{"web": web, "job": job, "plain": plain})
	waitFor(t, "web.1 made ahead", func() bool { return exists(filepath.Join(run, "web.1")) })
	waitFor(t, "job.1 made ahead", func() bool { return exists(filepath.Join(run, "job.1")) })
	if exists(filepath.Join(run, "plain.1")) {
		t.Error("a group for a process without resources")
	}

	before, err := os.Stat(filepath.Join(run, "web.1"))
	if err != nil {
		t.Fatal(err)
	}
	var spec proc.Spec
	g := c.group(web, 1, &spec)
	if g == nil || spec.Cgroup == nil {
		t.Fatal("no group for web")
	}
	if after, err := os.Stat(filepath.Join(run, "web.1")); err != nil || !os.SameFile(before, after) {
		t.Errorf("the start did not take the group made ahead (%v)", err)
	}
	if got := c.group(plain, 1, &proc.Spec{}); got != nil {
		t.Error("a group for a process without resources")
	}
	c.exited("web", g, &proc.Exit{})
	waitFor(t, "web.1 removed after its exit", func() bool { return !exists(filepath.Join(run, "web.1")) })
	waitFor(t, "web.2 made ahead", func() bool { return exists(filepath.Join(run, "web.2")) })

	jg := c.group(job, 1, &proc.Spec{})
	c.exited("job", jg, &proc.Exit{})
	waitFor(t, "job.1 removed after its exit", func() bool { return !exists(filepath.Join(run, "job.1")) })
	c.Close()
	if exists(run) {
		ents, _ := os.ReadDir(run)
		t.Errorf("the run's directory is left after Close, holding %v", ents)
	}
	if exists(filepath.Join(run, "job.2")) {
		t.Error("a next group for a process that is never restarted")
	}
}

// TestCgroupsOtherLimits: a group made ahead with other limits than the
// start asks (a reload changed them) is not used: the start gets one with
// its own.
func TestCgroupsOtherLimits(t *testing.T) {
	run := runDirV1(t)
	old := &config.Process{Name: "db", Resources: &config.Resources{Memory: &config.MemoryResources{Max: 64 << 20}}}
	c := NewCgroups(nil)
	defer c.Close()
	c.Plan(map[string]*config.Process{"db": old})
	waitFor(t, "db.1 made ahead", func() bool { return exists(filepath.Join(run, "db.1")) })
	changed := &config.Process{Name: "db", Resources: &config.Resources{Memory: &config.MemoryResources{Max: 32 << 20}}}
	g := c.group(changed, 1, &proc.Spec{})
	if g == nil {
		t.Fatal("no group")
	}
	defer c.exited("db", g, &proc.Exit{})
	b, err := os.ReadFile(filepath.Join(run, "db.1", "memory.limit_in_bytes"))
	if err != nil || string(b) != strconv.Itoa(32<<20)+"\n" {
		t.Errorf("memory.limit_in_bytes = %q, %v; want %d", b, err, 32<<20)
	}
}

// TestCgroupsNoneAsked: a run where no process asks for resources does
// no cgroup work: nothing is opened or made.
func TestCgroupsNoneAsked(t *testing.T) {
	run := runDirV1(t)
	c := NewCgroups(nil)
	c.Plan(map[string]*config.Process{"a": {Name: "a"}})
	if c.group(&config.Process{Name: "a"}, 1, &proc.Spec{}) != nil {
		t.Error("a group for a process without resources")
	}
	c.mu.Lock()
	opened := c.opened
	c.mu.Unlock()
	c.Close()
	if opened || exists(run) {
		t.Errorf("cgroups opened (%v) or made (%v) without resources", opened, exists(run))
	}
}

// TestCgroupsTeardownMakesNoneAhead: once the teardown began, an exit of
// a process that restarts has no next group made ahead, and the groups
// made ahead that no start took are removed (before, every such exit in
// a SIGTERM's teardown had a group made only to be removed again).
func TestCgroupsTeardownMakesNoneAhead(t *testing.T) {
	run := runDirV1(t)
	res := &config.Resources{Memory: &config.MemoryResources{Max: 64 << 20}}
	web := &config.Process{Name: "web", Resources: res}
	idle := &config.Process{Name: "idle", Resources: res}
	c := NewCgroups(nil)
	defer c.Close()
	c.Plan(map[string]*config.Process{"web": web, "idle": idle})
	waitFor(t, "web.1 made ahead", func() bool { return exists(filepath.Join(run, "web.1")) })
	waitFor(t, "idle.1 made ahead", func() bool { return exists(filepath.Join(run, "idle.1")) })
	g := c.group(web, 1, &proc.Spec{})
	if g == nil {
		t.Fatal("no group for web")
	}
	c.Teardown()
	c.exited("web", g, &proc.Exit{})
	waitFor(t, "web.1 removed after its exit", func() bool { return !exists(filepath.Join(run, "web.1")) })
	waitFor(t, "idle.1, made ahead and never taken, removed", func() bool { return !exists(filepath.Join(run, "idle.1")) })
	// A barrier: the owner does its jobs in order, so once a group
	// queued for removal after the exit is gone, a web.2 made ahead for
	// that exit would be there.
	sentinel, err := c.h.New("sentinel.1", cgroup.Limits{MemoryMax: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	c.own.remove(sentinel)
	waitFor(t, "the sentinel removed", func() bool { return !exists(filepath.Join(run, "sentinel.1")) })
	if exists(filepath.Join(run, "web.2")) {
		t.Error("web.2 made ahead in the teardown")
	}
	// A start in the teardown (a restart during termination) still gets
	// its group, made at once.
	if g2 := c.group(web, 3, &proc.Spec{}); g2 == nil {
		t.Error("a start in the teardown got no group")
	} else {
		c.exited("web", g2, &proc.Exit{})
	}
}
