package proc

import (
	"strconv"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
)

// Spec.OnExit gets each child's Exit exactly once, on a goroutine of its
// own (a slow callback does not hold up the reaper or other exits), and
// Done is nil.
func TestOnExitCallback(t *testing.T) {
	r := newReaper(t)
	const n = 20
	got := make(chan Exit, n)
	block := make(chan struct{})
	pids := map[int]int{}
	for i := range n {
		c, err := Spawn(r, Spec{Argv: testproc.Argv("exit", strconv.Itoa(i)), OnExit: func(ex Exit) {
			if i == 0 {
				<-block // the first callback blocks until every other exit arrived
			}
			got <- ex
		}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Done() != nil {
			t.Fatal("Done is not nil with OnExit set")
		}
		pids[c.Pid()] = i
	}
	seen := map[int]bool{}
	timeout := time.After(20 * time.Second * testproc.Slowdown())
	for len(seen) < n {
		if len(seen) == n-1 {
			close(block)
		}
		select {
		case ex := <-got:
			want, ok := pids[ex.Pid]
			if !ok || seen[ex.Pid] {
				t.Fatalf("unexpected or repeated exit %+v", ex)
			}
			if ex.Code() != want {
				t.Errorf("pid %d: code %d, want %d", ex.Pid, ex.Code(), want)
			}
			seen[ex.Pid] = true
		case <-timeout:
			t.Fatalf("%d of %d exits delivered", len(seen), n)
		}
	}
}
