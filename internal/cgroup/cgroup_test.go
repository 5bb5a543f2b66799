package cgroup

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// openV1Live opens the real v1 hierarchy of this machine as a podvisor of
// a made-up pid would, and removes what it made at the end.
func openV1Live(t *testing.T) *Hierarchy {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroup v1 directories need root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this host is cgroup v2; see TestV2Live")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		t.Skip("no cgroup v1 memory hierarchy: ", err)
	}
	// The test binary's own pid: a run of a pid that does not exist is
	// stale, and a podvisor starting meanwhile would remove its groups.
	h, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if h.V2() {
		t.Fatal("a v1 host opened as v2")
	}
	return h
}

// spawnIn forks `sleep` into g as the launcher does: cloned into it on v2,
// from a thread moved into it on v1.
func spawnIn(t *testing.T, g *Group, argv ...string) int {
	t.Helper()
	path, _ := filepathLook(argv[0])
	attr := &syscall.ProcAttr{Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	if fd := g.FD(); fd >= 0 {
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = true, fd
		pid, err := syscall.ForkExec(path, argv, attr)
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	done := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		settle, err := g.Enter()
		if err != nil {
			t.Error(err)
			done <- 0
			return
		}
		pid, err := syscall.ForkExec(path, argv, attr)
		settle()
		g.Home()
		if err != nil {
			t.Error(err)
		}
		done <- pid
	}()
	return <-done
}

func filepathLook(name string) (string, error) {
	for _, d := range []string{"/usr/bin", "/bin"} {
		if p := filepath.Join(d, name); fileExists(p) {
			return p, nil
		}
	}
	return name, fmt.Errorf("%s not found", name)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func reap(pid int) {
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
}

// TestV1Live: on this machine's v1 hierarchies the limits land in each
// controller's files, a child forked from the moved thread starts in every
// one of them while the thread is back home, and Kill ends a
// process that left its process group.
func TestV1Live(t *testing.T) {
	h := openV1Live(t)
	g, err := h.New("web.1", Limits{MemoryMax: 64 << 20, MemoryHigh: 48 << 20, CPUMax: 250, CPUWeight: 100, PidsMax: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	for file, want := range map[string]string{
		"memory/memory.limit_in_bytes":      "67108864",
		"memory/memory.soft_limit_in_bytes": "50331648",
		"cpu/cpu.cfs_quota_us":              "25000",
		"cpu/cpu.cfs_period_us":             "100000",
		"cpu/cpu.shares":                    "2597",
		"pids/pids.max":                     "20", // the fork of the spawner thread fits
	} {
		c, name, _ := strings.Cut(file, "/")
		if got := read(t, filepath.Join(g.dirs[c], name)); got != want {
			t.Errorf("%s = %s, want %s", file, got, want)
		}
	}
	pid := spawnIn(t, g, "sleep", "1000")
	defer reap(pid)
	if got := read(t, filepath.Join(g.dirs["pids"], "pids.max")); got != "20" {
		t.Errorf("pids.max after the fork = %s, want 20", got)
	}
	cg := read(t, fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, c := range v1Controllers {
		if _, ok := h.base[c]; !ok {
			t.Errorf("controller %s not usable on this host", c)
			continue
		}
		if c == "cpuacct" && h.real[c] != h.real["cpu"] {
			if _, ok := g.dirs[c]; ok {
				t.Errorf("a cpuacct directory apart from cpu was made: %s", g.dirs[c])
			}
			continue // mounted apart: CPU time is the /proc walk's
		}
		rel := strings.TrimPrefix(g.dirs[c], filepath.Join("/sys/fs/cgroup", c))
		if !strings.Contains(cg, c+":"+rel+"\n") && !strings.HasSuffix(cg, c+":"+rel) {
			t.Errorf("child not in its %s cgroup %s:\n%s", c, rel, cg)
		}
	}
	if self := read(t, fmt.Sprintf("/proc/self/task/%d/cgroup", unix.Gettid())); strings.Contains(self, "web.1") {
		t.Errorf("this thread stayed in the child's cgroup:\n%s", self)
	}
	if got := g.Pids(); len(got) != 1 || got[0] != pid {
		t.Errorf("Pids = %v, want [%d]", got, pid)
	}
	if u, ok := g.Usage(); !ok || u.Memory <= 0 {
		t.Errorf("Usage = %+v, %v", u, ok)
	}
	n, err := g.Kill()
	if err != nil || n != 1 {
		t.Fatalf("Kill = %d, %v", n, err)
	}
	reap(pid)
	if !g.Empty() {
		t.Errorf("not empty after Kill: %v", g.Pids())
	}
	if err := g.Remove(); err != nil {
		t.Error(err)
	}
}

// TestV1Events: a fork refused at pids.max is counted for the group, not
// before it was made.
func TestV1Events(t *testing.T) {
	h := openV1Live(t)
	g, err := h.New("bomb.1", Limits{PidsMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	pid := spawnIn(t, g, "sh", "-c", "for i in 1 2 3 4; do sleep 1000 & done; wait")
	defer reap(pid)
	deadline := time.Now().Add(10 * time.Second)
	for g.Events().ForkFailures == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g.Events().ForkFailures == 0 {
		t.Errorf("no fork failure counted: %s", read(t, filepath.Join(g.dirs["pids"], "pids.events")))
	}
	if n := len(g.Pids()); n > 2 {
		t.Errorf("%d processes under pids.max 2", n)
	}
	g.Kill()
	reap(pid)
	for !g.Empty() && time.Now().Before(deadline.Add(10*time.Second)) {
		time.Sleep(10 * time.Millisecond) // the orphaned sleeps are reaped by init
	}
	// The same name made again finds the directory there (New reads its
	// counters only then): what was refused before is not counted.
	again, err := h.New("bomb.1", Limits{PidsMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Events().ForkFailures; got != 0 {
		t.Errorf("a reused directory counts %d fork failures from before it was made (pids.events: %s)", got, read(t, filepath.Join(again.dirs["pids"], "pids.events")))
	}
}

// TestV2Live: a cgroup2 mount (here one without delegated controllers)
// takes the group, CLONE_INTO_CGROUP puts the child in it, missing
// controllers are named, and cgroup.kill ends it.
func TestV2Live(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting cgroup2 needs root")
	}
	mnt := t.TempDir()
	if err := unix.Mount("none", mnt, "cgroup2", 0, ""); err != nil {
		t.Skip("cannot mount cgroup2 here: ", err)
	}
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	own := fmt.Sprintf("podvisor-test-%d", rand.IntN(1e9))
	if err := os.Mkdir(filepath.Join(mnt, own), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(mnt, own))
	self := filepath.Join(t.TempDir(), "cgroup")
	if err := os.WriteFile(self, []byte("0::/"+own+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty group a killed podvisor left, and one still in use.
	stale, busy := filepath.Join(mnt, own, "p-old.3"), filepath.Join(mnt, own, "p-busy.1")
	for _, d := range []string{stale, busy} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(busy)
	busyPid := spawnIn(t, &Group{h: &Hierarchy{v2: true}, fd: openDir(t, busy)}, "sleep", "1000")
	defer reap(busyPid)
	defer unix.Kill(busyPid, unix.SIGKILL)
	h, err := Open(mnt, self, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(mnt, own, "podvisor"))
	if fileExists(stale) || !fileExists(busy) {
		t.Errorf("stale group left: %v, busy group removed: %v", fileExists(stale), !fileExists(busy))
	}
	if h.Stale.Removed != 1 || len(h.Stale.Busy) != 1 || h.Stale.Busy[0] != busy {
		t.Errorf("Stale = %+v, want 1 removed and %s busy", h.Stale, busy)
	}
	if !h.V2() {
		t.Fatal("not v2")
	}
	ctrls := read(t, filepath.Join(mnt, own, "cgroup.controllers"))
	for _, c := range []string{"memory", "cpu", "pids"} {
		if _, missing := h.Missing[c]; missing == strings.Contains(ctrls, c) {
			t.Errorf("%s: missing %v, controllers %q", c, missing, ctrls)
		}
	}
	g, err := h.New("web.1", Limits{MemoryMax: 64 << 20, PidsMax: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	if g.FD() < 0 {
		t.Fatal("no directory fd on v2")
	}
	pid := spawnIn(t, g, "sleep", "1000")
	defer reap(pid)
	if got, want := read(t, fmt.Sprintf("/proc/%d/cgroup", pid)), "/"+own+"/p-web.1"; !strings.HasSuffix(got, "::"+want) {
		t.Errorf("child's cgroup %q, want %s", got, want)
	}
	if n, err := g.Kill(); err != nil || n != 1 {
		t.Fatalf("Kill = %d, %v", n, err)
	}
	reap(pid)
	if !g.Empty() {
		t.Errorf("not empty after Kill: %v", g.Pids())
	}
}

func openDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestV1OnlyNeeded: a group is made in the controllers its limits need,
// and in memory for its accounting; in cpuacct only with a cpu directory
// of the same hierarchy (co-mounted), never on its own; no more.
func TestV1OnlyNeeded(t *testing.T) {
	h := openV1Live(t)
	h.PidsBudget = 0        // as under a podvisor without a pids limit of its own
	cpuWith := "cpu memory" // cpu and cpuacct mounted apart, as here
	if h.real["cpu"] == h.real["cpuacct"] {
		cpuWith = "cpu cpuacct memory"
	}
	for _, tc := range []struct {
		lim  Limits
		want string
	}{
		{Limits{MemoryMax: 64 << 20}, "memory"},
		{Limits{CPUWeight: 100}, cpuWith},
		{Limits{PidsMax: 10}, "memory pids"},
	} {
		g, err := h.New("only.1", tc.lim)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range v1Controllers {
			if _, ok := g.dirs[c]; ok {
				got = append(got, c)
			}
			if there := fileExists(filepath.Join(h.base[c], "only.1")); there != (g.dirs[c] != "") {
				t.Errorf("%+v: the %s directory exists: %v, but the group has %q", tc.lim, c, there, g.dirs[c])
			}
		}
		slices.Sort(got)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%+v: controllers %v, want %s", tc.lim, got, tc.want)
		}
		if err := g.Remove(); err != nil {
			t.Fatal(err)
		}
	}
	h.PidsBudget = 50 // every group is then limited: pids is needed too
	g, err := h.New("budget.1", Limits{MemoryMax: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	if got := read(t, filepath.Join(g.dirs["pids"], "pids.max")); got != "50" {
		t.Errorf("pids.max under a budget of 50 = %s, want 50", got)
	}
}

// TestV1Stale: at Open, a run directory whose podvisor is gone loses its
// empty groups and itself; a group that still holds a process stays, and
// is named; the run of a live podvisor is not touched.
func TestV1Stale(t *testing.T) {
	h := openV1Live(t)
	dead := deadPid(t)
	run := func(pid int) string { return filepath.Join(h.own["memory"], "podvisor-"+strconv.Itoa(pid)) }
	for _, d := range []string{run(dead), filepath.Join(run(dead), "web.1"), filepath.Join(run(dead), "db.2"),
		run(1), filepath.Join(run(1), "live.1")} { // pid 1 lives
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(run(1))
	defer os.Remove(filepath.Join(run(1), "live.1"))
	defer os.Remove(run(dead))
	defer os.Remove(filepath.Join(run(dead), "db.2"))
	g := &Group{h: h, enter: []string{filepath.Join(run(dead), "db.2", "tasks")}, home: []string{filepath.Join(h.own["memory"], "tasks")}, fd: -1}
	pid := spawnIn(t, g, "sleep", "1000")
	defer reap(pid)
	defer unix.Kill(pid, unix.SIGKILL)

	h2, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if fileExists(filepath.Join(run(dead), "web.1")) {
		t.Error("the empty stale group web.1 is still there")
	}
	if !fileExists(filepath.Join(run(dead), "db.2")) {
		t.Error("the stale group db.2, which holds a process, was removed")
	}
	if !fileExists(filepath.Join(run(1), "live.1")) {
		t.Error("the group of a live podvisor was removed")
	}
	if h2.Stale.Removed < 1 || !slices.Contains(h2.Stale.Busy, filepath.Join(run(dead), "db.2")) {
		t.Errorf("Stale = %+v", h2.Stale)
	}
	unix.Kill(pid, unix.SIGKILL)
	reap(pid)
	h3, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if fileExists(run(dead)) || len(h3.Stale.Busy) != 0 {
		t.Errorf("the stale run is still there once empty: %v, busy %v", fileExists(run(dead)), h3.Stale.Busy)
	}
}

// deadPid is the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	reap(pid)
	return pid
}

// TestV1KillForking: Kill ends a tree that keeps forking (here under no
// pids limit), without a freezer.
func TestV1KillForking(t *testing.T) {
	h := openV1Live(t)
	g, err := h.New("forking.1", Limits{MemoryMax: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	pid := spawnIn(t, g, "sh", "-c", "while :; do sleep 1000 & done")
	defer reap(pid)
	deadline := time.Now().Add(10 * time.Second)
	for len(g.Pids()) < 20 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	n, err := g.Kill()
	if err != nil || n < 20 {
		t.Fatalf("Kill = %d, %v", n, err)
	}
	reap(pid)
	for !g.Empty() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the killed sleeps are reaped by init
	}
	if left := g.Pids(); len(left) != 0 {
		t.Errorf("left after Kill: %v", left)
	}
}

func TestConversions(t *testing.T) {
	// cpu.shares 1024 (v1's default) is weight 39 by the OCI runtimes' formula; weight 100 is 2597.
	for w, s := range map[int64]int64{1: 2, 100: 2597, 10000: 262144} {
		if got := shares(w); got != s {
			t.Errorf("shares(%d) = %d, want %d", w, got, s)
		}
	}
	for m, q := range map[int64]int64{1: minQuota, 200: 20000, 2000: 200000} {
		if got := quota(m); got != q {
			t.Errorf("quota(%d) = %d, want %d", m, got, q)
		}
	}
}

// BenchmarkGroup: what a cgroup costs one start on this host, in two
// parts: making it with memory, CPU and pids limits and removing it
// (make+remove); moving a thread in and out, v1's way in (enter+leave).
// docs/BENCHMARKS.md.
func BenchmarkGroup(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	h, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		b.Skip(err)
	}
	defer h.Close()
	lim := Limits{MemoryMax: 64 << 20, CPUMax: 500, PidsMax: 100}
	b.Run("make+remove", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPU(b)
		defer func() { reportCPU(b, c0) }()
		for i := 0; b.Loop(); i++ {
			g, err := h.New(fmt.Sprintf("bench.%d", i), lim)
			if err != nil {
				b.Fatal(err)
			}
			if err := g.Remove(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("enter+leave", func(b *testing.B) {
		g, err := h.New("bench.enter", lim)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Remove()
		if g.FD() >= 0 {
			b.Skip("v2 clones into the cgroup: no thread moves")
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPU(b)
		for b.Loop() {
			settle, err := g.Enter()
			if err != nil {
				b.Fatal(err)
			}
			settle()
			g.Home()
		}
		reportCPU(b, c0)
	})
}

// BenchmarkStartFloorV1: the kernel's part of a start in a burst with
// memory and pids limits, without the fork: the group made (two
// directories, memory.limit_in_bytes and pids.max) and the thread moved
// into it straight from the previous one (two writes to tasks), as
// podvisor does it (docs/BENCHMARKS.md section 32). The thread's CPU time
// per start is the floor of what a cgroup per process costs on this host.
func BenchmarkStartFloorV1(b *testing.B) {
	h := openV1Bench(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var gs []*Group
	c0 := threadCPU(b)
	for i := 0; b.Loop(); i++ {
		g, err := h.New(fmt.Sprintf("floor.%d", i), Limits{MemoryMax: 64 << 20, PidsMax: 100})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.Enter(); err != nil {
			b.Fatal(err)
		}
		gs = append(gs, g)
	}
	reportCPU(b, c0)
	b.StopTimer()
	if len(gs) > 0 {
		gs[0].Home()
	}
	for _, g := range gs {
		if err := g.Remove(); err != nil {
			b.Error(err)
		}
	}
}

// threadCPU is the calling (locked) thread's CPU time, user and system:
// unlike ns/op it does not count the time the thread waited for a CPU.
func threadCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the thread's CPU time per op since c0, in µs.
func reportCPU(b *testing.B, c0 time.Duration) {
	b.ReportMetric(float64(threadCPU(b)-c0)/float64(b.N)/1e3, "cpu-µs/op")
}

// openV1Bench opens this host's v1 hierarchy for a benchmark of thread
// moves (v2 clones into the cgroup: none), closed at its end.
func openV1Bench(b *testing.B) *Hierarchy {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	h, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	if h.V2() {
		b.Skip("v2 clones into the cgroup: no thread moves")
	}
	return h
}

// BenchmarkMoveV1: a spawner thread's move into one v1 controller's
// cgroup and back, controller by controller, with how often the thread
// lost its CPU to another task during the two writes ("preempted/op",
// from /proc/thread-self/status). Run beside a task that keeps the same
// CPU busy to see the cpu controller's forced reschedule at each move
// (docs/BENCHMARKS.md section 26).
func BenchmarkMoveV1(b *testing.B) {
	h := openV1Bench(b)
	for _, c := range v1Controllers {
		b.Run(c, func(b *testing.B) {
			base, ok := h.base[c]
			if !ok {
				b.Skip(c + " is not mounted")
			}
			d := filepath.Join(base, "bench.move")
			if err := mkdir(d); err != nil {
				b.Fatal(err)
			}
			defer os.Remove(d)
			g := &Group{h: h, enter: []string{filepath.Join(d, "tasks")}, home: []string{filepath.Join(h.own[c], "tasks")}, fd: -1}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			n0, c0 := preempted(b), threadCPU(b)
			for b.Loop() {
				settle, err := g.Enter()
				if err != nil {
					b.Fatal(err)
				}
				settle()
				g.Home()
			}
			reportCPU(b, c0)
			b.ReportMetric(float64(preempted(b)-n0)/float64(b.N), "preempted/op")
		})
	}
}

// preempted is how often the calling thread lost its CPU to another task.
func preempted(b *testing.B) int {
	s, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(s)) {
		if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no nonvoluntary_ctxt_switches in /proc/thread-self/status")
	return 0
}

// TestV1OwnThreadIsNoMember: a spawner thread may stay in the group of
// the child it forked (Enter without Home). The group's cgroup.procs then
// lists podvisor's own pid; Pids, Empty and Kill leave it out, so the
// group reads empty (its removal is retried, not given up on) and a stop
// that kills the group's tree never kills podvisor.
func TestV1OwnThreadIsNoMember(t *testing.T) {
	h := openV1Live(t)
	g, err := h.New("stay.1", Limits{MemoryMax: 64 << 20, PidsMax: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	done := make(chan struct{})
	back := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if _, err := g.Enter(); err != nil {
			t.Error(err)
		}
		close(done)
		<-back
		g.Home()
		close(back)
	}()
	<-done
	raw, err := readPids(g.procsFile())
	if err != nil || !slices.Contains(raw, os.Getpid()) {
		t.Fatalf("cgroup.procs %v (%v) does not list this process: the test proves nothing", raw, err)
	}
	if p := g.Pids(); len(p) != 0 {
		t.Errorf("Pids = %v, want none (only a thread of this process is there)", p)
	}
	if !g.Empty() {
		t.Error("not Empty")
	}
	if n, err := g.Kill(); n != 0 || err != nil {
		t.Errorf("Kill = %d, %v; want 0, nil", n, err)
	}
	if err := g.Remove(); err == nil {
		t.Error("removed while a thread is in it: the test proves nothing")
	}
	back <- struct{}{}
	<-back
	if err := g.Remove(); err != nil {
		t.Errorf("Remove after the thread went home: %v", err)
	}
}

// TestV1PidsMaxOne: a limit of one task still lets the spawner thread
// fork the child into the group (made with 2, the thread and the child),
// and is 1 once the fork is done; a limit of 2 or more is written as is
// (the fork fits), with no write at the start.
func TestV1PidsMaxOne(t *testing.T) {
	h := openV1Live(t)
	g, err := h.New("one.1", Limits{PidsMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	if got := read(t, filepath.Join(g.dirs["pids"], "pids.max")); got != "2" {
		t.Errorf("pids.max before the fork = %s, want 2", got)
	}
	pid := spawnIn(t, g, "sleep", "1000")
	defer reap(pid)
	defer unix.Kill(pid, unix.SIGKILL)
	if pid <= 0 {
		t.Fatal("no child")
	}
	if got := read(t, filepath.Join(g.dirs["pids"], "pids.max")); got != "1" {
		t.Errorf("pids.max after the fork = %s, want 1", got)
	}
}
