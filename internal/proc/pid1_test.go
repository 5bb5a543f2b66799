package proc

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
)

// TestPID1 re-runs TestPID1Inner with this test binary as PID 1 of a fresh pid
// namespace (the same works with
// go test -exec 'unshare --pid --fork --mount-proc' -run PID1).
func TestPID1(t *testing.T) {
	if os.Getpid() == 1 {
		t.Skip("already PID 1; TestPID1Inner runs directly")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := newReaper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second*testproc.Slowdown())
	defer cancel()
	code, out, err := r.RunCommand(ctx, []string{"unshare", "--pid", "--fork", "--mount-proc",
		exe, "-test.run=^TestPID1Inner$", "-test.count=1", "-test.v"}, nil, "", 1<<20)
	if err != nil {
		t.Fatalf("unshare: %v\n%s", err, out)
	}
	if code != 0 && strings.HasPrefix(string(out), "unshare:") {
		t.Skipf("cannot create a pid namespace here: %s", out)
	}
	if code != 0 || !strings.Contains(string(out), "--- PASS: TestPID1Inner") {
		t.Fatalf("inner test exited %d:\n%s", code, out)
	}
	t.Logf("inner test:\n%s", out)
}

// TestPID1Inner runs only as PID 1 (see TestPID1): orphans of every depth are
// reparented to us and reaped, and the final sweep covers every process in the
// namespace.
func TestPID1Inner(t *testing.T) {
	if os.Getpid() != 1 {
		t.Skip("runs only as PID 1")
	}
	r := newReaper(t)
	before := r.Orphans()
	const n = 300 // TestOrphanBurstLeavesNoZombie does 1000; this checks PID-1 mode
	c := spawn(t, r, Spec{Argv: testproc.Argv("orphans", strconv.Itoa(n), "sleep", "0")})
	if ex := wait(t, c, 30*time.Second); ex.Code() != 0 {
		t.Fatalf("zombie factory exited %d", ex.Code())
	}
	testproc.Eventually(t, 5*time.Second, "no process but us, no zombie", func() bool {
		return len(Descendants(1)) == 0
	})
	if got := r.Orphans() - before; got < n {
		t.Fatalf("%d orphans reaped, want %d", got, n)
	}

	d, out := spawnOut(t, r, Spec{Argv: testproc.Argv("daemonize", "ignore-term")})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	daemon := mustAtoi(t, strings.TrimPrefix(strings.TrimSpace(line), "daemon pid="))
	wait(t, d, 5*time.Second)
	testproc.Eventually(t, 5*time.Second, "daemon reparented to PID 1", func() bool {
		st, err := readStat(daemon)
		return err == nil && st.ppid == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if sw := KillDescendants(ctx, 100*time.Millisecond, nil); sw.Killed != 1 || sw.Remaining != 0 {
		t.Errorf("sweep %+v, want the TERM-ignoring daemon killed", sw)
	}
	testproc.Eventually(t, 5*time.Second, "namespace empty but for us", func() bool {
		return len(Descendants(1)) == 0
	})
}
