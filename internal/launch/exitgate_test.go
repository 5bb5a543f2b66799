package launch

import (
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

func gateForTest(t *testing.T) (*exitGate, chan proc.Exit) {
	t.Helper()
	got := make(chan proc.Exit, 4)
	return newExitGate(2, func(ex proc.Exit) { got <- ex }), got
}

func noDelivery(t *testing.T, got chan proc.Exit, when string) {
	t.Helper()
	if len(got) != 0 {
		t.Fatalf("exit delivered %s", when)
	}
}

// The exit goes once, when the last of the reap and the two EOFs comes, in
// any order; a pipe held open lets it go outputDrain after the reap.
func TestExitGate(t *testing.T) {
	ex := proc.Exit{Pid: 42}
	t.Run("eofs first", func(t *testing.T) {
		g, got := gateForTest(t)
		g.eof()
		g.eof()
		noDelivery(t, got, "before the reap")
		g.reaped(ex)
		if e := <-got; e.Pid != 42 {
			t.Fatalf("delivered %+v", e)
		}
	})
	t.Run("reap first", func(t *testing.T) {
		g, got := gateForTest(t)
		g.reaped(ex)
		g.eof()
		noDelivery(t, got, "before the second EOF")
		g.eof()
		<-got
		time.Sleep(2 * outputDrain) // the drain timer must not deliver again
		noDelivery(t, got, "twice")
	})
	t.Run("held pipe", func(t *testing.T) {
		g, got := gateForTest(t)
		t0 := time.Now()
		g.reaped(ex)
		g.eof()
		select {
		case <-got:
		case <-time.After(10 * outputDrain):
			t.Fatal("no delivery while a pipe stays open")
		}
		if d := time.Since(t0); d < outputDrain {
			t.Fatalf("delivered after %v, before the drain of %v", d, outputDrain)
		}
		g.eof() // the holder lets go later: not delivered again
		noDelivery(t, got, "twice")
	})
}
