package health

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// runnerFunc adapts a function to CommandRunner.
type runnerFunc func() (int, []byte, error)

func (f runnerFunc) RunCommand(context.Context, []string, []string, string, int) (int, []byte, error) {
	return f()
}

// podvisor's own shortage of fds, memory or processes is not the probed
// process's failure (issue "Hardening" H7).
func TestOwnResourceErrorsAreInconclusive(t *testing.T) {
	tests := []struct {
		err          error
		inconclusive bool
	}{
		{fmt.Errorf("output pipe: %w", &os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}), true},
		{fmt.Errorf("fork: %w", syscall.EAGAIN), true},
		{fmt.Errorf("fork: %w", syscall.ENOMEM), true},
		{fmt.Errorf("exec %q: not found in PATH", "probe"), false},
		{fmt.Errorf("exec: %w", syscall.EACCES), false},
	}
	for _, tt := range tests {
		c, err := NewExecChecker(runnerFunc(func() (int, []byte, error) { return -1, nil, tt.err }), []string{"probe"}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		res := c.Check(context.Background())
		if res.OK || res.Inconclusive != tt.inconclusive {
			t.Errorf("%v: result %+v, want inconclusive=%v", tt.err, res, tt.inconclusive)
		}
	}
}

// Watch neither counts inconclusive attempts nor reports them, and backs off.
func TestWatchIgnoresInconclusiveAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var attempts []time.Duration
		t0 := time.Now()
		c := checkerFunc(func() Result {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, time.Since(t0))
			if len(attempts) <= 4 {
				return Result{Inconclusive: true, Detail: "too many open files"}
			}
			return Result{OK: false, Detail: "down"}
		})
		ctx, cancel := context.WithCancel(context.Background())
		var trs []Transition
		done := make(chan struct{})
		go func() {
			Watch(ctx, c, Timing{StartInterval: time.Second, Interval: time.Second, Timeout: time.Second,
				SuccessThreshold: 1, FailureThreshold: 1, StartReady: true}, func(tr Transition) { trs = append(trs, tr) }, nil)
			close(done)
		}()
		time.Sleep(31 * time.Second)
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{0, 2 * time.Second, 6 * time.Second, 14 * time.Second, 30 * time.Second, 31 * time.Second}
		if fmt.Sprint(attempts) != fmt.Sprint(want) {
			t.Errorf("attempts at %v, want %v (backing off while inconclusive, then the normal period)", attempts, want)
		}
		if len(trs) != 1 || trs[0].Ready || trs[0].Detail != "down" {
			t.Errorf("transitions %+v, want only the real failure", trs)
		}
	})
}

type checkerFunc func() Result

func (f checkerFunc) Check(context.Context) Result { return f() }
