package resources

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	// Orphans of the trees below are reparented to the test binary, as they
	// would be to podvisor.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

func needPython(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("python3 is required (Debian package python3)")
		}
		t.Skip("python3 not installed")
	}
	// The python3 on PATH may be a wrapper (a pyenv shim is a bash script
	// that forks helpers before it execs the interpreter); the figures below
	// are about the interpreter, so the tests run it by its real path.
	out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s cannot say where its interpreter is: %v", p, err)
	}
	if real := strings.TrimSpace(string(out)); real != "" {
		return real
	}
	return p
}

// startTree starts script under sh as a process group leader with its stdout
// on a pipe, like podvisor's children, and kills the group on cleanup.
func startTree(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(r); r.Close() }()
	t.Cleanup(func() {
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pidOf(t *testing.T, s string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.Fields(s)[0])
	if err != nil {
		t.Fatalf("pid %q: %v", s, err)
	}
	return pid
}

// procRSS is /proc's own VmRSS of pid in bytes.
func procRSS(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// procCPU is the CPU time of pid per its /proc/<pid>/stat, in seconds.
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	// utime, stime and the reaped children's cutime, cstime: what the
	// sampler counts for a member (a process's CPU includes its waited-for
	// children's).
	var sum float64
	for _, field := range []int{14, 15, 16, 17} {
		v, _ := strconv.ParseFloat(f[field-3], 64)
		sum += v
	}
	return sum / clockTicks
}

func within(got, want, frac float64) bool {
	return got >= want*(1-frac) && got <= want*(1+frac)
}

// TestTreeFigures: a tree with a 50 MB allocation and a 1 s CPU burn,
// summed under its root, within 10% of what /proc says of its members.
func TestTreeFigures(t *testing.T) {
	py := needPython(t)
	dir := t.TempDir()
	mem, cpu := filepath.Join(dir, "mem"), filepath.Join(dir, "cpu")
	alloc := `import os,time
b = b'x' * (50 << 20)
open(os.environ['OUT'], 'w').write('%d\n' % os.getpid())
time.sleep(1000)`
	burn := `import os,time
t = time.process_time()
while time.process_time() - t < 1.0: pass
open(os.environ['OUT'], 'w').write('%d %f\n' % (os.getpid(), time.process_time()))
time.sleep(1000)`
	cmd := startTree(t, "OUT="+mem+" "+py+" -c \""+alloc+"\" & OUT="+cpu+" "+py+" -c \""+burn+"\" & wait")
	memPid := pidOf(t, waitFile(t, mem))
	cpuLine := strings.Fields(waitFile(t, cpu))
	cpuPid := pidOf(t, cpuLine[0])
	selfCPU, _ := strconv.ParseFloat(cpuLine[1], 64)

	s := New(os.Getpid(), time.Second)
	u, ok := s.Sample([]Root{{Name: "tree", Pid: cmd.Process.Pid}, {Name: "gone", Pid: 0}})["tree"]
	if !ok {
		t.Fatal("no usage for the tree")
	}
	members := []int{cmd.Process.Pid, memPid, cpuPid}
	var wantRSS uint64
	var wantCPU float64
	for _, pid := range members {
		wantRSS += procRSS(t, pid)
		wantCPU += procCPU(t, pid)
	}
	if u.Processes != 3 {
		t.Errorf("processes = %d, want 3 (sh and two python3)", u.Processes)
	}
	if u.RSSBytes < 50<<20 || !within(float64(u.RSSBytes), float64(wantRSS), 0.10) {
		t.Errorf("RSS = %d, want >= 50 MiB and within 10%% of /proc's %d", u.RSSBytes, wantRSS)
	}
	if u.CPUSeconds < selfCPU*0.9 || !within(u.CPUSeconds, wantCPU, 0.10) {
		t.Errorf("CPU = %.2fs, want >= the burner's own %.2fs and within 10%% of /proc's %.2fs", u.CPUSeconds, selfCPU, wantCPU)
	}
	if u.Threads < 3 {
		t.Errorf("threads = %d, want >= 3", u.Threads)
	}
	if u.OpenFDs < 9 { // 0, 1, 2 of each member at least
		t.Errorf("open fds = %d, want >= 9", u.OpenFDs)
	}
}

// TestDaemonCounted: a grandchild that left the group and session (setsid)
// and whose parent died, so it was reparented to the subreaper, still counts
// under its process: through the output pipe it kept, or, having closed its
// output, because an earlier walk saw it in the tree.
func TestDaemonCounted(t *testing.T) {
	dir := t.TempDir()
	piped, quiet := filepath.Join(dir, "piped"), filepath.Join(dir, "quiet")
	// The piped daemon is orphaned at once; the quiet one's parent waits
	// for it, so a first walk sees it through the parent chain.
	cmd := startTree(t, `
sh -c 'setsid sleep 1000 & echo $! > `+piped+`' 
sh -c 'setsid sleep 1001 </dev/null >/dev/null 2>&1 & echo "$! $$" > `+quiet+`; wait' &
wait
exec sleep 1002`)
	root := cmd.Process.Pid
	pipedPid := pidOf(t, waitFile(t, piped))
	q := strings.Fields(waitFile(t, quiet))
	quietPid, quietParent := pidOf(t, q[0]), pidOf(t, q[1])
	eventuallyParent(t, pipedPid, os.Getpid())
	// Each daemon's pid is written right after its fork, before it has
	// left the group: until its setsid(1) has run it still counts by its
	// process group, and on a busy machine that can be long after.
	eventuallySessionLeader(t, pipedPid)
	eventuallySessionLeader(t, quietPid)

	s := New(os.Getpid(), 0) // no reuse: every call walks
	roots := []Root{{Name: "svc", Pid: root}}
	u := s.Sample(roots)["svc"]
	// sh (root), the quiet daemon's parent, both daemons.
	if u.Processes != 4 {
		t.Fatalf("first walk: %d processes, want 4 (root sh, waiting sh, two daemons)", u.Processes)
	}
	if err := unix.Kill(quietParent, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventuallyParent(t, quietPid, os.Getpid())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(quietParent)); err != nil {
			break // reaped by the root shell
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed parent was never reaped")
		}
	}
	u = s.Sample(roots)["svc"]
	if u.Processes != 3 {
		t.Fatalf("after the quiet daemon's parent died: %d processes, want 3", u.Processes)
	}
	// A fresh sampler has no memory: only the piped daemon is found.
	if got := New(os.Getpid(), 0).Sample(roots)["svc"].Processes; got != 2 {
		t.Errorf("fresh sampler: %d processes, want 2 (root sh and the piped daemon)", got)
	}
	if s.Walks() != 2 {
		t.Errorf("walks = %d, want 2", s.Walks())
	}
}

// eventuallySessionLeader waits until pid leads its own session and runs
// sleep, that is, until setsid(1) has called setsid() and exec'd.
func eventuallySessionLeader(t *testing.T, pid int) {
	t.Helper()
	eventuallyStat(t, pid, "a session leader running sleep", func(comm string, f []string) bool {
		return comm == "sleep" && f[3] == strconv.Itoa(pid)
	})
}

func eventuallyParent(t *testing.T, pid, parent int) {
	t.Helper()
	eventuallyStat(t, pid, "a child of "+strconv.Itoa(parent), func(_ string, f []string) bool {
		return f[1] == strconv.Itoa(parent)
	})
}

// eventuallyStat waits until ok holds for pid's command name and the fields
// of /proc/PID/stat after it (state ppid pgrp session ...).
func eventuallyStat(t *testing.T, pid int, what string, ok func(comm string, fields []string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		open, i := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open >= 0 && i > open {
			if f := strings.Fields(string(b[i+1:])); len(f) > 3 && ok(string(b[open+1:i]), f) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became %s: %s", pid, what, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReuse: calls within maxAge share one walk; a new root set walks again.
func TestReuse(t *testing.T) {
	cmd := startTree(t, "exec sleep 1000")
	s := New(os.Getpid(), time.Hour)
	roots := []Root{{Name: "a", Pid: cmd.Process.Pid}}
	now := time.Now()
	first := s.sampleAt(roots, now)
	for range 5 {
		s.sampleAt(roots, now.Add(500*time.Millisecond))
	}
	if s.Walks() != 1 {
		t.Fatalf("walks = %d after 6 calls within maxAge, want 1", s.Walks())
	}
	if first["a"].Processes != 1 {
		t.Fatalf("processes = %d, want 1", first["a"].Processes)
	}
	s.sampleAt([]Root{{Name: "a", Pid: cmd.Process.Pid}, {Name: "b", Pid: 0}}, now)
	s.sampleAt(roots, now.Add(2*time.Hour))
	if s.Walks() != 3 {
		t.Fatalf("walks = %d, want 3 (new roots, then expiry)", s.Walks())
	}
}

func TestParseStat(t *testing.T) {
	line := "42 (a) b) c) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 5 0 12345 1000000 2560 18446744073709551615\n"
	st, ok := parseStat(42, []byte(line))
	if !ok {
		t.Fatal("parse failed")
	}
	want := pstat{pid: 42, ppid: 1, pgrp: 42, flags: 4194560, ticks: 210, ownTicks: 200, threads: 5, start: 12345, vsize: 1000000, rssPages: 2560}
	if st != want {
		t.Fatalf("got %+v, want %+v", st, want)
	}
	if _, ok := parseStat(1, []byte("1 (x) S 0 1")); ok {
		t.Fatal("short line parsed")
	}
}

// TestCountFDs: both ways of counting (the directory's size, and its
// entries on kernels before 6.2) agree with a listing of /proc/self/fd.
func TestCountFDs(t *testing.T) {
	w := &walker{dents: make([]byte, 8192)}
	files := make([]*os.File, 0, 20)
	for range 20 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	path := "/proc/" + strconv.Itoa(os.Getpid()) + "/fd"
	ents, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	// ReadDir's own fd was open during the listing; it is closed now.
	want := len(ents) - 1
	// countEntries sees its own directory fd too (on another process's
	// directory, as in a walk, it would not).
	if got := w.countEntries(path); got != want+1 {
		t.Errorf("countEntries = %d, want %d", got, want+1)
	}
	if got := w.countFDs("/proc", os.Getpid()); got != want {
		t.Errorf("countFDs = %d, want %d", got, want)
	}
	if want < 23 {
		t.Errorf("only %d fds open, want at least 23", want)
	}
}
