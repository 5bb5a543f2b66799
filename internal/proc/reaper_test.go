package proc

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
	"golang.org/x/sys/unix"
)

// A child that exits at once is never lost: registration happens under the
// same lock as fork, and Run looks pids up under that lock too.
func TestStartNeverLosesAnExit(t *testing.T) {
	r := newReaper(t)
	const n, workers = 1000, 4
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				c, err := Spawn(r, Spec{Argv: []string{"true"}})
				if err != nil {
					errs <- err.Error()
					return
				}
				select {
				case ex := <-c.Done():
					if ex.Code() != 0 || ex.Pid != c.Pid() {
						errs <- "spawn " + strconv.Itoa(i) + ": bad exit " + strconv.Itoa(ex.Code())
					}
				case <-time.After(10 * time.Second * testproc.Slowdown()):
					errs <- "spawn " + strconv.Itoa(i) + ": exit never delivered"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Exits are reaped by pid, the one waitid names: a full wait4(-1) pass (a
// walk of every child, see Run) is made only once, when Run starts. A wrong
// si_pid offset, or a waiter reporting a zombie twice, would show as passes.
func TestReapsByPid(t *testing.T) {
	r := newReaper(t)
	const n, workers = 200, 4
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				c, err := Spawn(r, Spec{Argv: []string{"sh", "-c", "exit " + strconv.Itoa(i%100)}})
				if err != nil {
					errs <- err.Error()
					return
				}
				select {
				case ex := <-c.Done():
					if ex.Code() != i%100 || ex.Pid != c.Pid() {
						errs <- "spawn " + strconv.Itoa(i) + ": exit code " + strconv.Itoa(ex.Code())
					}
				case <-time.After(10 * time.Second * testproc.Slowdown()):
					errs <- "spawn " + strconv.Itoa(i) + ": exit never delivered"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := r.fullReaps.Load(); got != 1 {
		t.Errorf("%d full wait4(-1) passes for %d exits, want 1 (Run's first)", got, n)
	}
}

// Start works before Run: the exit is collected by Run's first pass.
func TestStartBeforeRun(t *testing.T) {
	r := NewReaper(nil)
	c, err := Spawn(r, Spec{Argv: []string{"sh", "-c", "exit 7"}})
	if err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 5*time.Second, "child to become a zombie", func() bool {
		st, err := readStat(c.Pid())
		return err == nil && st.zombie()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if ex := wait(t, c, 5*time.Second); ex.Code() != 7 {
		t.Fatalf("code %d, want 7", ex.Code())
	}
}

// Run started before any child exists still reaps later children.
func TestRunBeforeAnyChild(t *testing.T) {
	r := newReaper(t)
	c := spawn(t, r, Spec{Argv: []string{"sh", "-c", "exit 3"}})
	if ex := wait(t, c, 5*time.Second); ex.Code() != 3 {
		t.Fatalf("code %d, want 3", ex.Code())
	}
}

// Orphans reparented to podvisor (the test binary is a subreaper, see
// TestMain) are all reaped: a child starts 1000 `sleep 0` that it never waits
// for and exits, so they reach us as a burst of zombies and orphans.
func TestOrphanBurstLeavesNoZombie(t *testing.T) {
	r := newReaper(t)
	before := r.Orphans()
	const n = 1000
	c := spawn(t, r, Spec{Argv: testproc.Argv("orphans", strconv.Itoa(n), "sleep", "0")})
	if ex := wait(t, c, 30*time.Second); ex.Code() != 0 {
		t.Fatalf("zombie factory exited %d", ex.Code())
	}
	exited := time.Now()
	testproc.Eventually(t, 5*time.Second, "every orphan reaped", func() bool {
		return len(Descendants(os.Getpid())) == 0
	})
	orphans := r.Orphans() - before
	t.Logf("%d orphans reaped within %v after the factory exited", orphans, time.Since(exited))
	if orphans < n {
		t.Fatalf("%d orphans reaped, want %d", orphans, n)
	}
}

// Reaping without Wait must still close the pidfd Go opens per child.
func TestNoPidfdLeak(t *testing.T) {
	r := newReaper(t)
	warm := spawn(t, r, Spec{Argv: []string{"true"}}) // first spawn starts the spawner thread
	wait(t, warm, 5*time.Second)
	before := countPidfds(t)
	for range 100 {
		c := spawn(t, r, Spec{Argv: []string{"true"}})
		wait(t, c, 5*time.Second)
	}
	if after := countPidfds(t); after != before {
		t.Fatalf("pidfds: %d before, %d after 100 spawns", before, after)
	}
	// The same through Start with a caller-built command.
	for range 20 {
		ch, err := r.Start(exec.Command("/bin/true"))
		if err != nil {
			t.Fatal(err)
		}
		<-ch
	}
	if after := countPidfds(t); after != before {
		t.Fatalf("pidfds: %d before, %d after 20 Starts", before, after)
	}
}

func countPidfds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:[pidfd]" {
			n++
		}
	}
	return n
}

func TestStartRejectsCommandsThatNeedWait(t *testing.T) {
	r := NewReaper(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	withCtx := exec.CommandContext(ctx, "true")
	withBuffer := exec.Command("true")
	withBuffer.Stdout = &bytes.Buffer{}
	for name, cmd := range map[string]*exec.Cmd{"context": withCtx, "buffer": withBuffer} {
		if _, err := r.Start(cmd); err == nil {
			t.Errorf("%s: Start accepted a command that needs Wait", name)
		}
		if cmd.Process != nil {
			t.Errorf("%s: process started anyway", name)
		}
	}
}

// A child the reaper did not start (as PID 1: a process `kubectl exec` left
// behind, reparented to it) is reaped when it exits, even though the reaper
// had no children and so no waitid to wake it: while idle, the waiter
// listens for SIGCHLD.
func TestReapsAChildItDidNotStartWhileIdle(t *testing.T) {
	r := newReaper(t)
	testproc.Eventually(t, 5*time.Second, "the waiter idle, with no children", func() bool {
		r.kickMu.Lock()
		w := r.w
		r.kickMu.Unlock()
		return w != nil && w.idling.Load()
	})
	before := r.Orphans()
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 5*time.Second, "the stranger reaped", func() bool {
		return r.Orphans() > before && unix.Kill(pid, 0) == unix.ESRCH
	})
}
