package supervisor

import "sync/atomic"

// changes wakes whoever waits for the next published snapshot (the event
// stream of /events and the control socket). It is a broadcast by close:
// Changed hands out a channel, publish closes it and forgets it. With nobody
// waiting, publish pays one atomic load and nothing wakes; with waiters, it
// pays one close however many there are. The loop never blocks on a reader.
type changes struct {
	ch atomic.Pointer[chan struct{}] // nil while nobody waits
}

// wait returns a channel closed at the next publish.
func (c *changes) wait() <-chan struct{} {
	for {
		if p := c.ch.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if c.ch.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// notify closes the channel of the current waiters, if any.
func (c *changes) notify() {
	if p := c.ch.Swap(nil); p != nil {
		close(*p)
	}
}

// Changed returns a channel that is closed once a snapshot newer than the
// one Snapshot returns now has been published. The usual watch loop is:
//
//	for {
//		ch := s.Changed() // first, so no publish falls in between
//		use(s.Snapshot())
//		<-ch
//	}
func (s *Supervisor) Changed() <-chan struct{} { return s.changed.wait() }
