package cgroup

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
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
	h, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", 1e6+rand.IntN(1e6))
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
		leave, err := g.Enter()
		if err != nil {
			t.Error(err)
			done <- 0
			return
		}
		pid, err := syscall.ForkExec(path, argv, attr)
		leave()
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
// one of them while the thread is back home, and the freezer kill ends a
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
		"pids/pids.max":                     "21", // until the spawner thread leaves
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
	if read(t, filepath.Join(g.dirs["freezer"], "freezer.state")) != "THAWED" {
		t.Error("left frozen")
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
	h, err := Open(mnt, self, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(mnt, own, "podvisor"))
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
	h, err := Open("/sys/fs/cgroup", "/proc/self/cgroup", 1e6+rand.IntN(1e6))
	if err != nil {
		b.Skip(err)
	}
	defer h.Close()
	lim := Limits{MemoryMax: 64 << 20, CPUMax: 500, PidsMax: 100}
	b.Run("make+remove", func(b *testing.B) {
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
		for b.Loop() {
			leave, err := g.Enter()
			if err != nil {
				b.Fatal(err)
			}
			leave()
		}
	})
}
