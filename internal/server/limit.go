package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// MaxConns bounds the HTTP connections open at once. Every connection costs
// podvisor a file descriptor; without a cap, clients could take the fds its
// probes and children need.
//
// The cap must never cost a probe: the kubelet's probes (1 s timeout) and
// podvisor wait --ready open a new connection each time, and 64 clients
// that send half a request and wait (slowloris) would otherwise hold every
// slot for the 5 s header timeout, get /readyz and /livez timed out, and
// the pod restarted or taken out of its Service. So a new connection is
// always accepted; when the cap is reached, the oldest connection that is
// not inside a handler (still reading its request, or idle between
// requests) is closed to make room. Only when every open connection is
// being served (each handler is short and bounded by the write timeout)
// does a new one wait for a slot.
const MaxConns = 64

// LimitListener returns a listener that keeps at most n accepted
// connections open, shedding the oldest one not being served when a new
// one arrives at the cap. Handlers must be wrapped with Serving (as
// NewHTTPServer does) for a connection to count as being served.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, n: n, freed: make(chan struct{}, 1), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	n         int
	mu        sync.Mutex
	open      []*limitConn  // in accept order; guarded by mu
	freed     chan struct{} // a slot was given back (buffered, one pending wake-up)
	done      chan struct{} // closed by Close: a waiting Accept returns
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitConn{Conn: c, l: l}
	for {
		l.mu.Lock()
		if len(l.open) < l.n {
			l.open = append(l.open, lc)
			l.mu.Unlock()
			return lc, nil
		}
		var victim *limitConn
		for _, o := range l.open {
			if o.serving.Load() == 0 {
				victim = o
				break
			}
		}
		l.mu.Unlock()
		if victim != nil {
			victim.Close() // gives its slot back
			continue
		}
		select {
		case <-l.freed:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// release takes c out of the open set and wakes a waiting Accept.
func (l *limitListener) release(c *limitConn) {
	l.mu.Lock()
	for i, o := range l.open {
		if o == c {
			l.open = append(l.open[:i], l.open[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	l       *limitListener
	once    sync.Once
	serving atomic.Int32 // requests inside a handler (0 or 1 with HTTP/1.1)
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// connKey carries the accepted connection in a request's context.
type connKey struct{}

// connContext is http.Server.ConnContext: it remembers the connection, so
// that Serving can mark it.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// Serving wraps h so that a connection counts as being served (and is not
// shed) while a handler runs for it.
func Serving(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := r.Context().Value(connKey{}).(*limitConn); ok {
			lc.serving.Add(1)
			defer lc.serving.Add(-1)
		}
		h.ServeHTTP(w, r)
	})
}
