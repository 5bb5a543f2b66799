package proc

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOOMScoreAdj: the child sees its oom_score_adj from its first
// instruction on (cat reads its own), podvisor keeps its own value, and
// spawns without a value, even concurrent ones, inherit podvisor's.
func TestOOMScoreAdj(t *testing.T) {
	r := newReaper(t)
	own, err := readOOMScoreAdj(selfOOMScoreAdj)
	if err != nil {
		t.Fatal(err)
	}
	want := own + 300
	if want > 1000 {
		want = 1000
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var adj *int
			expect := own
			if i%2 == 0 {
				adj, expect = &want, want
			}
			_, out := spawnOut(t, r, Spec{Argv: []string{"cat", "/proc/self/oom_score_adj"}, OOMScoreAdj: adj})
			line, _ := out.ReadString('\n')
			if got, _ := strconv.Atoi(strings.TrimSpace(line)); got != expect {
				t.Errorf("spawn %d (adj %v): child's oom_score_adj %q, want %d", i, adj, line, expect)
			}
		}()
	}
	wg.Wait()
	if got, _ := readOOMScoreAdj(selfOOMScoreAdj); got != own {
		t.Errorf("podvisor's own oom_score_adj is %d after the spawns, want %d", got, own)
	}
}

func TestOOMAdjErrorSaysWhatToDo(t *testing.T) {
	err := oomAdjError(-500, 0, unix.EACCES)
	var se *SpawnError
	if !errors.As(err, &se) || se.Retryable() {
		t.Fatalf("got %v, want a non-retryable SpawnError", err)
	}
	for _, want := range []string{"oom_score_adj -500", "CAP_SYS_RESOURCE", "uid " + strconv.Itoa(os.Geteuid()), "at least 0"} {
		if !strings.Contains(se.Error(), want) {
			t.Errorf("%q lacks %q", se.Error(), want)
		}
	}
}
