package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// A teardown that cannot signal every process within stopWaveBudget does it
// in waves (perf: /livez while 10,000 stop): pings are answered between
// waves, and every process gets its stop signal before the loop handles any
// exit, as in a teardown of one step.
func TestTeardownStopsInWaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 40
		var y strings.Builder
		y.WriteString("processes:\n")
		for i := range n {
			fmt.Fprintf(&y, "  p%02d: {command: [x]}\n", i)
		}
		f := newFake(nil)
		sup, err := New(Options{Config: parse(t, y.String()), Launcher: f})
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			order []string // as the loop sees it: "stop" (stop begun), "exit" (exit handled)
		)
		sup.onTransition = func(name string, from, to State) {
			if !allowed(from, to) {
				t.Errorf("process %s moved %s -> %s, which the transition table does not have", name, from, to)
			}
			mu.Lock()
			defer mu.Unlock()
			switch to {
			case Stopping:
				order = append(order, "stop "+name)
			case Stopped:
				order = append(order, "exit "+name)
			}
		}
		// Each signal (the stop signal and the SIGCONT) costs the loop 1 ms
		// of the bubble's clock: 2 ms a process, so a few per wave. The
		// clock moves only while every goroutine of the bubble is blocked,
		// so a goroutine reads the instant it was woken at.
		var first, last time.Time // of the signals
		f.onSignal = func() {
			mu.Lock()
			if first.IsZero() {
				first = time.Now()
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			last = time.Now()
			mu.Unlock()
		}
		sigs := make(chan os.Signal, 1)
		done := make(chan Outcome)
		go func() { done <- sup.Run(context.Background(), sigs) }()
		synctest.Wait()
		sigs <- syscall.SIGTERM
		var answered []time.Time // when each ping was answered
		go func() {
			for sup.Ping(context.Background()) == nil {
				mu.Lock()
				answered = append(answered, time.Now())
				mu.Unlock()
			}
		}()
		o := <-done
		if o.Reason != ReasonSignal {
			t.Errorf("outcome %+v", o)
		}
		mu.Lock()
		defer mu.Unlock()
		midway := 0
		for _, at := range answered {
			if at.After(first) && at.Before(last) {
				midway++
			}
		}
		if midway == 0 {
			t.Errorf("no ping answered while the stop signals went out (%v to %v): %v", first, last, answered)
		}
		stops, firstExit := 0, -1
		for i, e := range order {
			switch {
			case strings.HasPrefix(e, "stop "):
				stops++
				if firstExit >= 0 {
					t.Errorf("%s after the loop handled %s: an exit came before the last stop signal", e, order[firstExit])
				}
			case firstExit < 0:
				firstExit = i
			}
		}
		if stops != n || len(order) != 2*n {
			t.Errorf("%d stops, %d entries, want %d and %d: %v", stops, len(order), n, 2*n, order)
		}
	})
}
