package server

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// MaxConns bounds the HTTP connections served at once. Every connection
// costs podvisor a file descriptor; without a cap, clients could take the
// fds its probes and children need.
//
// The cap must never cost a probe: the kubelet's probes (1 s timeout) and
// podvisor wait --ready open a new connection each time, and anyone who
// reaches the port can open MaxConns connections. So a new connection is
// always accepted at once, and at the cap room is made in this order:
//
//  1. the oldest connection not inside a handler (still reading its
//     request, or idle between requests: slowloris, H18) is closed;
//  2. else the connection whose write has been stuck longest, if for at
//     least stuckAfter (a client that sends requests and never reads the
//     answers, issue 34 item 1) is closed;
//  3. else the newcomer is let in beyond the cap, as one of ProbeConns
//     connections that answer only /readyz and /livez (others get 503
//     and Retry-After), each closed after one answer; when those are all
//     taken the oldest of them not answering a probe yet is closed, and
//     only if every one is, the oldest.
//
// So a probe is answered whatever the other clients do, and connections
// being served are never shed while their writes make progress.
const MaxConns = 64

// ProbeConns is how many connections beyond MaxConns may wait for a probe's
// answer at once.
const ProbeConns = 16

const (
	// stuckAfter: at the cap, a connection whose write has made no
	// progress for this long gives its slot up to a newcomer.
	stuckAfter = time.Second
	// writeStall fails a write that makes no progress for this long (the
	// connection is then closed), whatever the response's own deadline.
	writeStall = 5 * time.Second
	// writeChunk is the most one write hands the kernel under one
	// deadline: a big response to a slow but reading client goes on, one
	// chunk at a time, where one deadline for all of it would cut it off.
	writeChunk = 16 << 10
)

// probePaths are answered beyond the cap.
var probePaths = map[string]bool{"/readyz": true, "/livez": true}

// LimitListener returns a listener that serves at most n connections at
// once, making room at the cap as MaxConns says, with ProbeConns
// connections for probes beyond it. Handlers must be wrapped with Serving
// (as NewHTTPServer does) for a connection to count as being served and
// for the probe-only connections to answer probes only.
func LimitListener(ln net.Listener, n int) net.Listener {
	return newLimitListener(ln, n, time.Now)
}

func newLimitListener(ln net.Listener, n int, now func() time.Time) *limitListener {
	return &limitListener{Listener: ln, n: n, reserve: ProbeConns, now: now, stall: writeStall}
}

type limitListener struct {
	net.Listener
	n       int
	reserve int              // probe-only connections beyond n
	now     func() time.Time // when a write began (tests move it)
	stall   time.Duration    // writeStall (tests shorten it)
	mu      sync.Mutex
	open    []*limitConn // served connections, in accept order; guarded by mu
	probes  []*limitConn // probe-only connections, in accept order; guarded by mu
}

// Accept never waits for a slot: see MaxConns.
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
		victim := l.victimLocked()
		if victim == nil {
			if len(l.probes) < l.reserve {
				lc.probeOnly = true
				l.probes = append(l.probes, lc)
				l.mu.Unlock()
				return lc, nil
			}
			victim = l.probeVictimLocked()
		}
		l.mu.Unlock()
		victim.Close() // gives its slot back before returning
	}
}

// victimLocked picks the served connection to close at the cap: the oldest
// one not inside a handler, else the one stuck longest in a write, if for
// at least stuckAfter; nil when every one is making progress.
func (l *limitListener) victimLocked() *limitConn {
	for _, o := range l.open {
		if o.serving.Load() == 0 {
			return o
		}
	}
	var stuck *limitConn
	oldest := l.now().Add(-stuckAfter).UnixNano()
	for _, o := range l.open {
		if s := o.writingSince.Load(); s != 0 && s <= oldest {
			stuck, oldest = o, s
		}
	}
	return stuck
}

// probeVictimLocked picks the probe-only connection to close when all are
// taken: the oldest not inside a handler (it has not sent its request
// yet), else the oldest. A probe being answered keeps its connection
// while there is another to close, so a flood of connections within a
// probe's round trip does not cut the kubelet's probe off.
func (l *limitListener) probeVictimLocked() *limitConn {
	for _, p := range l.probes {
		if p.serving.Load() == 0 {
			return p
		}
	}
	return l.probes[0]
}

// release takes c out of the open set.
func (l *limitListener) release(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	remove := func(list []*limitConn) []*limitConn {
		for i, o := range list {
			if o == c {
				return append(list[:i], list[i+1:]...)
			}
		}
		return list
	}
	if c.probeOnly {
		l.probes = remove(l.probes)
	} else {
		l.open = remove(l.open)
	}
}

// limitConn gives its slot back once, on the first Close, and bounds how
// long a write may go without progress.
type limitConn struct {
	net.Conn
	l         *limitListener
	once      sync.Once
	probeOnly bool         // beyond the cap: answers probes only; set before Accept returns
	serving   atomic.Int32 // requests inside a handler (0 or 1 with HTTP/1.1)
	// writingSince is when the write in progress began (l.now, Unix ns);
	// 0 when no write is in progress.
	writingSince atomic.Int64
	// deadline is the write deadline the server or a handler set (Unix
	// ns, 0 for none): a chunk's own deadline never goes past it.
	deadline atomic.Int64
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// Write hands p to the kernel a chunk at a time, each with at most
// writeStall to go (and never past the deadline set for the response), so
// a client that stops reading loses its connection soon, while one that
// reads slowly keeps it.
func (c *limitConn) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		chunk := p[n:min(len(p), n+writeChunk)]
		dl := time.Now().Add(c.l.stall)
		if set := c.deadline.Load(); set != 0 && set < dl.UnixNano() {
			dl = time.Unix(0, set)
		}
		if err := c.Conn.SetWriteDeadline(dl); err != nil {
			return n, err
		}
		c.writingSince.Store(c.l.now().UnixNano())
		m, err := c.Conn.Write(chunk)
		c.writingSince.Store(0)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *limitConn) SetWriteDeadline(t time.Time) error {
	c.deadline.Store(unixNano(t))
	return c.Conn.SetWriteDeadline(t)
}

func (c *limitConn) SetDeadline(t time.Time) error {
	c.deadline.Store(unixNano(t))
	return c.Conn.SetDeadline(t)
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
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
// shed unless its write is stuck) while a handler runs for it, and so that
// a connection let in beyond the cap answers one probe and nothing else.
func Serving(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, ok := r.Context().Value(connKey{}).(*limitConn)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		if lc.probeOnly {
			w.Header().Set("Connection", "close") // its slot is for the next probe
			if !probePaths[r.URL.Path] {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "too many connections: podvisor serves "+strconv.Itoa(lc.l.n)+
					" at once and beyond that answers only /readyz and /livez; try again", http.StatusServiceUnavailable)
				return
			}
		}
		lc.serving.Add(1)
		defer lc.serving.Add(-1)
		h.ServeHTTP(w, r)
	})
}
