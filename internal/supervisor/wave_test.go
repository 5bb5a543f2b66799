package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// countingLauncher counts Launch calls, each of which takes 1 ms (of the
// bubble's clock), like a fork/exec.
type countingLauncher struct {
	Launcher
	n atomic.Int64
}

func (l *countingLauncher) Launch(p *config.Process, gen uint64, h Hooks) (Child, error) {
	l.n.Add(1)
	time.Sleep(time.Millisecond)
	return l.Launcher.Launch(p, gen, h)
}

// Thousands of startable processes are launched in waves of at most maxWave
// per step, with the loop back in its select between waves (so /livez and
// signals are answered while they start), and all of them are started.
func TestLargeStartGoesInWaves(t *testing.T) {
	if raceEnabled {
		t.Skip("3,000 processes in a synctest bubble trip the race runtime (see race_on_test.go); runs without -race")
	}
	synctest.Test(t, func(t *testing.T) {
		n := 3*maxWave + 7
		var sb strings.Builder
		sb.WriteString("processes:\n")
		for i := range n {
			fmt.Fprintf(&sb, "  s%04d: {command: [sleep, '1000']}\n", i)
		}
		f := newFake(nil)
		cl := &countingLauncher{Launcher: f}
		sup, err := New(Options{Config: parse(t, sb.String()), Launcher: cl})
		if err != nil {
			t.Fatal(err)
		}
		var last, biggest, waves int64
		sup.afterStep = func(time.Time) {
			got := cl.n.Load()
			if d := got - last; d > 0 {
				waves++
				biggest = max(biggest, d)
			}
			last = got
		}
		sigs := make(chan os.Signal, 1)
		out := make(chan Outcome, 1)
		t0 := time.Now()
		go func() { out <- sup.Run(context.Background(), sigs) }()
		for !sup.Snapshot().Ready {
			if time.Since(t0) > time.Minute {
				t.Fatalf("not all running: %v", sup.Snapshot().NotReady)
			}
			time.Sleep(time.Millisecond)
		}
		// n launches of 1 ms, spawnParallelism at a time: the next wave
		// must follow at once, not after a wave's duration more.
		if took, want := time.Since(t0), time.Duration(int64(n/spawnParallelism)+2*waves)*time.Millisecond; took > want {
			t.Errorf("all running after %v, want at most %v", took, want)
		}
		if cl.n.Load() != int64(n) || biggest > maxWave || waves < 4 {
			t.Errorf("%d launches in %d waves, the biggest %d; want %d in at least 4 waves of at most %d", cl.n.Load(), waves, biggest, n, maxWave)
		}
		sigs <- syscall.SIGTERM
		if o := <-out; o.ExitCode() != 0 {
			t.Errorf("exit %d", o.ExitCode())
		}
		close(f.quit)
	})
}

// blockingLauncher holds every Launch until release is closed, like fork/exec
// on a machine whose CPUs are busy with the children already started.
type blockingLauncher struct {
	Launcher
	entered chan struct{}
	release chan struct{}
}

func (l *blockingLauncher) Launch(p *config.Process, gen uint64, h Hooks) (Child, error) {
	l.entered <- struct{}{}
	<-l.release
	return l.Launcher.Launch(p, gen, h)
}

// The loop answers pings (/livez) while a wave waits for its launches: a
// slow fork/exec must not make podvisor look hung.
func TestPingAnsweredWhileAWaveLaunches(t *testing.T) {
	const n = 8
	var sb strings.Builder
	sb.WriteString("processes:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  s%d: {command: [sleep, '1000']}\n", i)
	}
	f := newFake(nil)
	defer close(f.quit)
	bl := &blockingLauncher{Launcher: f, entered: make(chan struct{}, n), release: make(chan struct{})}
	sup, err := New(Options{Config: parse(t, sb.String()), Launcher: bl})
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	out := make(chan Outcome, 1)
	go func() { out <- sup.Run(context.Background(), sigs) }()
	<-bl.entered // a wave is under way, its launches held
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 3 {
		if err := sup.Ping(ctx); err != nil {
			t.Fatalf("ping during a wave: %v", err)
		}
	}
	if got := len(bl.entered) + 1; got > spawnParallelism {
		t.Errorf("%d launches in flight, want at most %d", got, spawnParallelism)
	}
	close(bl.release)
	for !sup.Snapshot().Ready {
		if ctx.Err() != nil {
			t.Fatalf("not all running: %v", sup.Snapshot().NotReady)
		}
		time.Sleep(time.Millisecond)
	}
	sigs <- syscall.SIGTERM
	if o := <-out; o.ExitCode() != 0 {
		t.Errorf("exit %d", o.ExitCode())
	}
}
