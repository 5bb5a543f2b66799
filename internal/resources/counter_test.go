package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeProc is a /proc with only the stat files a walk reads.
type fakeProc struct {
	t   *testing.T
	dir string
}

// set writes pid's stat: parent, process group, own and reaped children's
// CPU ticks, start time.
func (f fakeProc) set(pid, ppid, pgrp int, utime, cutime uint64, start uint64) {
	f.t.Helper()
	d := filepath.Join(f.dir, strconv.Itoa(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		f.t.Fatal(err)
	}
	// fields 3..24: state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime vsize rss
	stat := fmt.Sprintf("%d (p%d) S %d %d %d 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %d 0 1\n", pid, pid, ppid, pgrp, pgrp, utime, cutime, start)
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f fakeProc) gone(pid int) {
	if err := os.RemoveAll(filepath.Join(f.dir, strconv.Itoa(pid))); err != nil {
		f.t.Fatal(err)
	}
}

// Issue 22 item 10: podvisor_process_cpu_seconds_total went down while the
// process ran (1.39 -> 0.14). A counter never decreases: the CPU time of a
// member that is gone stays counted unless the member's parent, still in
// the tree, reaped it (then the parent's cutime has it); a daemon that
// podvisor reaped, or a descendant restarted meanwhile, is not lost.
func TestCPUNeverDecreases(t *testing.T) {
	const self = 1
	f := fakeProc{t, t.TempDir()}
	s := New(self, 0)
	s.proc = f.dir
	roots := []Root{{Name: "app", Pid: 100}}
	now := time.Unix(1000, 0)
	cpu := func() float64 {
		now = now.Add(time.Second)
		return s.sampleAt(roots, now)["app"].CPUSeconds
	}
	f.set(100, self, 100, 10, 0, 1) // the leader
	f.set(200, 100, 100, 100, 0, 2) // its worker
	f.set(300, self, 100, 29, 0, 3) // a daemon in its group, reparented to podvisor
	if got := cpu(); !sameSecs(got, 1.39) {
		t.Fatalf("first sample %.2f, want 1.39", got)
	}
	// The leader reaps its worker (its cutime grows by the worker's time)
	// and starts a new one; podvisor reaps the daemon.
	f.gone(200)
	f.gone(300)
	f.set(100, self, 100, 10, 100, 1)
	f.set(201, 100, 100, 4, 0, 4)
	if got := cpu(); !sameSecs(got, 1.43) {
		t.Fatalf("after the worker was reaped by the leader and the daemon by podvisor: %.2f, want 1.43 (1.10 + 0.04 + the daemon's 0.29)", got)
	}
	// A restarted daemon: its predecessor's time stays.
	f.set(301, self, 100, 7, 0, 5)
	first := cpu()
	f.gone(301)
	f.set(302, self, 100, 1, 0, 6)
	if got := cpu(); got < first || !sameSecs(got, 1.51) {
		t.Fatalf("after a daemon restarted: %.2f (before %.2f), want 1.51", got, first)
	}
	// A new incarnation of the process starts from its own figures.
	for _, pid := range []int{100, 201, 302} {
		f.gone(pid)
	}
	f.set(400, self, 400, 3, 0, 7)
	roots = []Root{{Name: "app", Pid: 400}}
	if got := cpu(); !sameSecs(got, 0.03) {
		t.Fatalf("new incarnation: %.2f, want 0.03", got)
	}
}

func sameSecs(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The same with real processes: a daemon of the tree (reparented to the
// test binary, a subreaper as podvisor is) burns CPU, exits and is reaped
// by the subreaper, not by a member: the tree's CPU must not go down.
func TestCPUKeepsReapedDaemon(t *testing.T) {
	dir := t.TempDir()
	pidFile, stop := filepath.Join(dir, "pid"), filepath.Join(dir, "stop")
	burn := `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`
	// The subshell exits at once: the daemon is orphaned, stays in the
	// tree's process group and is reparented to this test binary.
	daemon := burn + `; echo $$ > ` + pidFile + `; while [ ! -e ` + stop + ` ]; do sleep 0.01; done`
	cmd := startTree(t, `( sh -c '`+daemon+`' & ); while :; do sleep 1; done`)
	pid := pidOf(t, waitFile(t, pidFile))
	s := New(os.Getpid(), 0)
	roots := []Root{{Name: "tree", Pid: cmd.Process.Pid}}
	before := s.Sample(roots)["tree"]
	if before.Processes < 2 || before.CPUSeconds < 0.05 {
		t.Fatalf("before the daemon exits: %+v, want the daemon and its CPU counted", before)
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil { // podvisor, the subreaper, reaps it
		t.Fatalf("reap daemon %d: %v", pid, err)
	}
	after := s.Sample(roots)["tree"]
	if after.CPUSeconds < before.CPUSeconds {
		t.Fatalf("CPU went down from %.2fs to %.2fs when the daemon was reaped by the subreaper", before.CPUSeconds, after.CPUSeconds)
	}
}
