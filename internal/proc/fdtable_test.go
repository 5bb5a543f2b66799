package proc

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Spawner threads fork from private fd tables, so an fd podvisor opens for
// itself (here: one of thousands of log pipes) is not copied into the next
// child by the kernel, while the main thread keeps the main table (what
// pidfd_getfd reads). Children still get exactly the fds they are given.
func TestSpawnersForkFromAPrivateFDTable(t *testing.T) {
	r := newReaper(t)
	c := spawn(t, r, Spec{Argv: []string{"true"}}) // starts the spawners
	wait(t, c, 5*time.Second)
	if r.spawners().fdt.self < 0 {
		t.Skip("no pidfd_getfd or unshare here: spawners share the main table")
	}
	f, err := os.Open("/proc/self/status") // opened after the spawners unshared
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if _, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil {
		t.Fatalf("the main thread's table lacks fd %d: %v", fd, err)
	}
	var mine unix.Stat_t
	if err := unix.Fstat(fd, &mine); err != nil {
		t.Fatal(err)
	}
	for range 2 * r.sp.n {
		var tid int
		var same bool
		r.sp.run(func(th *spawnThread) {
			tid = unix.Gettid()
			if !th.private {
				t.Errorf("spawner thread %d shares the main table", tid)
			}
			// The number may be taken there too, by a file podvisor
			// has closed since: compare what it refers to.
			var st unix.Stat_t
			same = unix.Fstat(fd, &st) == nil && st.Dev == mine.Dev && st.Ino == mine.Ino
		})
		if tid == os.Getpid() {
			t.Errorf("a spawner runs on the main thread")
		}
		if same {
			t.Errorf("spawner thread %d sees fd %d, opened in the main table after it started", tid, fd)
		}
	}
	// What a child is given still reaches it (imported by pidfd_getfd).
	d, out := spawnOut(t, r, Spec{Argv: []string{"sh", "-c", "echo through"}})
	line, err := out.ReadString('\n')
	if err != nil || line != "through\n" {
		t.Fatalf("child's stdout: %q, %v", line, err)
	}
	wait(t, d, 5*time.Second)
}

// A pipe podvisor holds when the spawners start (the first child's own
// output pipe, made just before the first spawn) still reaches EOF once
// podvisor closes its write end: the private tables keep no copy of it.
func TestPipeOpenWhenSpawnersStartStillReachesEOF(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	r := newReaper(t) // fresh: its spawners start with the first spawn below
	c := spawn(t, r, Spec{Argv: []string{"true"}, Stdout: pw})
	wait(t, c, 5*time.Second)
	pw.Close()
	if err := pr.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var buf [16]byte
	if n, err := pr.Read(buf[:]); n != 0 || err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("read after the last writer closed: %d bytes, %v; want EOF", n, err)
	}
}

// A file podvisor has open while the spawner threads start (podvisor run
// reads its config meanwhile) is not kept open by their private tables once
// podvisor closes it.
func TestSpawnersKeepNoFileOpenAtTheirStart(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "config")
	if err != nil {
		t.Fatal(err)
	}
	sp := StartSpawners()
	sp.wait(0)
	if sp.fdt.self < 0 {
		t.Skip("no pidfd_getfd or unshare here: spawners share the main table")
	}
	name := f.Name()
	f.Close()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		dir := "/proc/self/task/" + task.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // the task has exited
		}
		for _, fd := range fds {
			if target, _ := os.Readlink(dir + fd.Name()); target == name {
				t.Errorf("thread %s still holds %s as fd %s after podvisor closed it", task.Name(), name, fd.Name())
			}
		}
	}
	// The pool still forks, with what its threads kept.
	r := runReaper(t, NewReaperWith(nil, sp))
	c := spawn(t, r, Spec{Argv: []string{"true"}})
	if ex := wait(t, c, 5*time.Second); ex.Code() != 0 {
		t.Fatalf("child exited %d", ex.Code())
	}
}

// More spawner threads than Ps only add hand-offs: a fork holds its P.
func TestSpawnerCountFollowsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if n := spawnerCount(); n != 1 {
		t.Errorf("GOMAXPROCS 1: %d spawners, want 1", n)
	}
	runtime.GOMAXPROCS(16)
	if n := spawnerCount(); n != 4 {
		t.Errorf("GOMAXPROCS 16: %d spawners, want 4", n)
	}
}

// The first spawn takes the notes made so far; the rest of the pool's come
// once every thread is up, none twice and none lost.
func TestSpawnerNotesSplitAtTheFirstThread(t *testing.T) {
	p := &Spawners{first: make(chan struct{}), ready: make(chan struct{})}
	p.note(false, "a", nil)
	close(p.first)
	first := p.waitFirst()
	p.note(true, "b", nil)
	p.note(false, "c", nil)
	close(p.ready)
	rest := p.wait(len(first))
	var got []string
	for _, n := range append(first, rest...) {
		got = append(got, n.msg)
	}
	if strings.Join(got, "") != "abc" || len(first) != 1 {
		t.Fatalf("notes %q (first %d), want a then b, c", got, len(first))
	}
}
