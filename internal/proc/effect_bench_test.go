package proc

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
)

// BenchmarkExitToReaped: from a child's last instruction (stampchild's
// "exit" stamp, taken right before it returns from main) to the reaper's
// wait4 (Exit.At): the kernel's exit, the wake-up of the reaper, the reap.
// Also reported: the same hop plus the delivery on Child.Done to a waiting
// goroutine (exit-to-done-ms), which is what the launcher waits on.
// exitDelay: the child idles 20 ms between SIGTERM and its exit, so the
// reaper is asleep when the exit comes, as in an ordered stop.
const exitDelay = "20"

func BenchmarkExitToReaped(b *testing.B) {
	child := testproc.StampChild(b, runToEnd)
	r := NewReaper(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	var reaped, done []time.Duration
	for b.Loop() {
		f := filepath.Join(b.TempDir(), "stamps")
		c, err := Spawn(r, Spec{Argv: []string{child, f, "c", "none", "", exitDelay}})
		if err != nil {
			b.Fatal(err)
		}
		testproc.WaitLines(b, f, 1, 10*time.Second)
		_ = c.Signal(syscall.SIGTERM)
		ex := <-c.Done()
		got := time.Now()
		st, err := testproc.ReadStamps(f)
		if err != nil {
			b.Fatal(err)
		}
		exit, ok := st["c exit"]
		if !ok {
			b.Fatalf("no exit stamp: %v", st)
		}
		reaped = append(reaped, ex.At.Sub(exit))
		done = append(done, got.Sub(exit))
	}
	slices.Sort(reaped)
	slices.Sort(done)
	b.ReportMetric(float64(reaped[len(reaped)/2].Nanoseconds())/1e6, "exit-to-reaped-ms")
	b.ReportMetric(float64(done[len(done)/2].Nanoseconds())/1e6, "exit-to-done-ms")
}

// runToEnd runs a build command before any Reaper runs (see StampChild).
func runToEnd(argv ...string) ([]byte, error) {
	return exec.Command(argv[0], argv[1:]...).CombinedOutput()
}
