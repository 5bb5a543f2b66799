package logs

import (
	"sync"
	"time"
)

// DefaultTailBytes bounds the memory one process's tail may hold, whatever
// its line count: 200 lines of 64 KiB would otherwise be 12.5 MiB.
const DefaultTailBytes = 64 << 10

// TailLine is one line kept in a Tail.
type TailLine struct {
	Seq    uint64 // 1 for the first line the tail ever saw
	Time   time.Time
	Stream string // "stdout" or "stderr"
	Line   string
}

// Tail keeps the most recent lines of one process's output, at most
// maxLines lines and about maxBytes bytes of text (a single longer line is
// clipped). It is written by the process's stream readers and read by
// control-socket clients, hence the mutex; nothing in it blocks a writer
// beyond a copy. Memory is taken only as lines arrive: a quiet process's tail
// costs a few words.
type Tail struct {
	mu       sync.Mutex
	maxLines int
	maxBytes int
	ring     []TailLine // oldest at head once full
	head     int
	n        int
	bytes    int
	next     uint64        // Seq of the next line
	wake     chan struct{} // closed (and replaced) when a line is added while watched
	watched  bool          // someone holds wake: the next Add must close it
}

// NewTail returns an empty tail. maxLines 0 keeps nothing.
func NewTail(maxLines, maxBytes int) *Tail {
	return &Tail{maxLines: maxLines, maxBytes: maxBytes, next: 1, wake: make(chan struct{})}
}

// Add appends a line (the slice is copied).
func (t *Tail) Add(stream string, line []byte, now time.Time) {
	if t.maxLines <= 0 {
		return
	}
	if len(line) > t.maxBytes {
		line = line[:t.maxBytes]
	}
	l := TailLine{Time: now, Stream: stream, Line: string(line)}
	t.mu.Lock()
	l.Seq = t.next
	t.next++
	for t.n > 0 && (t.n >= t.maxLines || t.bytes+len(l.Line) > t.maxBytes) {
		t.bytes -= len(t.ring[t.head].Line)
		t.ring[t.head] = TailLine{}
		t.head = (t.head + 1) % len(t.ring)
		t.n--
	}
	if t.n == len(t.ring) { // grow: the ring is full below maxLines
		grown := make([]TailLine, min(max(2*len(t.ring), 8), t.maxLines))
		for i := range t.n {
			grown[i] = t.ring[(t.head+i)%len(t.ring)]
		}
		t.ring, t.head = grown, 0
	}
	t.ring[(t.head+t.n)%len(t.ring)] = l
	t.n++
	t.bytes += len(l.Line)
	if t.watched { // a new channel per line only while someone follows
		close(t.wake)
		t.wake, t.watched = make(chan struct{}), false
	}
	t.mu.Unlock()
}

// Last returns up to n of the most recent lines (all kept lines if n < 0),
// oldest first, and the Seq the next line will have.
func (t *Tail) Last(n int) ([]TailLine, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n < 0 || n > t.n {
		n = t.n
	}
	out := make([]TailLine, n)
	for i := range n {
		out[i] = t.ring[(t.head+t.n-n+i)%len(t.ring)]
	}
	return out, t.next
}

// Since returns the kept lines with Seq >= seq, the Seq the next line will
// have, and a channel closed when another line arrives (for following). Lines
// already evicted are skipped: a follower slower than the output loses lines
// rather than holding memory.
func (t *Tail) Since(seq uint64) ([]TailLine, uint64, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []TailLine
	for i := range t.n {
		if l := t.ring[(t.head+i)%len(t.ring)]; l.Seq >= seq {
			out = append(out, l)
		}
	}
	t.watched = true
	return out, t.next, t.wake
}

// Tails holds one Tail per process name, created on first use.
type Tails struct {
	mu       sync.Mutex
	maxLines int
	maxBytes int
	by       map[string]*Tail
}

// NewTails returns a set of tails of maxLines lines and maxBytes bytes each.
func NewTails(maxLines, maxBytes int) *Tails {
	return &Tails{maxLines: maxLines, maxBytes: maxBytes, by: map[string]*Tail{}}
}

// Get returns name's tail, creating it.
func (ts *Tails) Get(name string) *Tail {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.by[name]
	if !ok {
		t = NewTail(ts.maxLines, ts.maxBytes)
		ts.by[name] = t
	}
	return t
}

// Tap returns a line tap for Sink.Attach that adds each line of name's
// stream to its tail, then calls next (if any).
func (ts *Tails) Tap(name, stream string, next func([]byte)) func([]byte) {
	if ts == nil || ts.maxLines <= 0 {
		return next
	}
	t := ts.Get(name)
	return func(line []byte) {
		t.Add(stream, line, time.Now())
		if next != nil {
			next(line)
		}
	}
}

// SetMaxLines changes how many lines each tail keeps (a reload of
// log.tail); tails that hold more drop their oldest lines at the next Add.
func (ts *Tails) SetMaxLines(n int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.maxLines = n
	for _, t := range ts.by {
		t.mu.Lock()
		t.maxLines = n
		t.mu.Unlock()
	}
}
