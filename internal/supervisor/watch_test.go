package supervisor

import "testing"

func TestChangesBroadcastByClose(t *testing.T) {
	var c changes
	c.notify() // nobody waits: nothing to close, nothing kept
	if c.ch.Load() != nil {
		t.Fatal("notify without waiters left a channel")
	}
	a, b := c.wait(), c.wait()
	if a != b {
		t.Fatal("two waiters before one publish got different channels")
	}
	select {
	case <-a:
		t.Fatal("closed before any publish")
	default:
	}
	c.notify()
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("not closed by publish")
		}
	}
	if n := c.wait(); n == a {
		t.Fatal("a waiter after the publish got the closed channel")
	}
}
