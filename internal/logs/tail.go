package logs

import (
	"bytes"
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
// maxLines lines and maxBytes bytes of text (a single longer line is
// clipped). The text lives in one byte ring that grows, as output arrives, up
// to maxBytes and is then reused: a chatty process costs maxBytes and makes
// no garbage per line, a quiet one costs a few words. It is written by the
// process's stream readers and read by control-socket clients, hence the
// mutex; a writer never waits for more than a copy.
type Tail struct {
	mu       sync.Mutex
	maxLines int
	maxBytes int
	buf      []byte     // text ring; line i starts at meta[i].off
	used     int        // bytes of buf in use, from the oldest line's start
	meta     []tailMeta // line ring, oldest at head
	head     int
	n        int
	next     uint64        // Seq of the next line
	wake     chan struct{} // closed (and replaced) when a line is added while watched
	watched  bool          // someone holds wake: the next Add must close it
}

type tailMeta struct {
	off, len int
	at       int64 // unix nanoseconds
	stderr   bool
}

// NewTail returns an empty tail. maxLines 0 keeps nothing.
func NewTail(maxLines, maxBytes int) *Tail {
	return &Tail{maxLines: maxLines, maxBytes: maxBytes, next: 1, wake: make(chan struct{})}
}

// Add appends a line (the slice is copied).
func (t *Tail) Add(stream string, line []byte, now time.Time) {
	t.mu.Lock()
	if t.maxLines > 0 {
		t.add(stream == "stderr", line, now.UnixNano())
		t.woken()
	}
	t.mu.Unlock() // not deferred: cheap while a flood holds the stream
}

// addLines appends lines, all read at the same instant. Only the lines that
// stay are copied: of a read of thousands of lines, all but the last few
// hundred would be evicted at once (perf: a flood of a million lines, where
// a copy per line cost 14% of podvisor's time).
func (t *Tail) addLines(stderr bool, lines [][]byte, now time.Time) {
	t.mu.Lock()
	if t.maxLines <= 0 {
		t.mu.Unlock()
		return
	}
	// The newest lines that fit; the newest is kept in any case (clipped).
	first, size := len(lines), 0
	for first > 0 && len(lines)-first < t.maxLines {
		l := min(len(lines[first-1]), t.maxBytes)
		if first < len(lines) && size+l > t.maxBytes {
			break
		}
		size += l
		first--
	}
	if first > 0 { // kept lines are a run: older ones go with the skipped
		t.next += uint64(first)
		t.n, t.used = 0, 0
	}
	at := now.UnixNano()
	for _, l := range lines[first:] {
		t.add(stderr, l, at)
	}
	t.woken()
	t.mu.Unlock()
}

// addRegion is addLines for the n lines of region, complete lines each
// ending in '\n' (a read's, see splitter.lines): it walks back from the end
// over the lines that stay, and looks at no other.
func (t *Tail) addRegion(stderr bool, region []byte, n int, now time.Time) {
	t.mu.Lock()
	if t.maxLines <= 0 || n == 0 {
		t.mu.Unlock()
		return
	}
	// The newest lines that fit, as addLines: start is the oldest's.
	start, kept, size := len(region), 0, 0
	for kept < n && kept < t.maxLines {
		s := lastNL(region[:start-1]) + 1
		l := min(start-1-s, t.maxBytes)
		if kept > 0 && size+l > t.maxBytes {
			break
		}
		size += l
		kept++
		start = s
	}
	at := now.UnixNano()
	if kept == n {
		for rest := region[start:]; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			t.add(stderr, rest[:i], at)
			rest = rest[i+1:]
		}
	} else {
		// A flood: the kept lines replace every line, so they are laid
		// out from the start of the rings in one pass.
		t.next += uint64(n)
		t.n, t.used, t.head = 0, 0, 0
		if size > len(t.buf) {
			t.growBuf(size)
		}
		if len(t.meta) < kept {
			t.meta = make([]tailMeta, min(t.maxLines, max(2*len(t.meta), kept)))
		}
		off := 0
		for rest := region[start:]; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			l := min(i, t.maxBytes)
			copy(t.buf[off:off+l], rest[:l])
			t.meta[t.n] = tailMeta{off: off, len: l, at: at, stderr: stderr}
			t.n++
			off += l
			rest = rest[i+1:]
		}
		t.used = off
	}
	t.woken()
	t.mu.Unlock()
}

// add appends one line; t.mu is held and the tail is enabled.
func (t *Tail) add(stderr bool, line []byte, at int64) {
	if len(line) > t.maxBytes {
		line = line[:t.maxBytes]
	}
	t.next++
	for t.n > 0 && (t.n >= t.maxLines || t.used+len(line) > t.maxBytes) {
		m := t.meta[t.head]
		t.used -= m.len
		t.head = (t.head + 1) % len(t.meta)
		t.n--
	}
	if t.n == 0 {
		t.used = 0
	}
	if t.used+len(line) > len(t.buf) {
		t.growBuf(t.used + len(line))
	}
	if t.n == len(t.meta) {
		t.growMeta()
	}
	off := 0
	if t.n > 0 && len(t.buf) > 0 { // no text yet if every line so far was empty
		last := t.meta[(t.head+t.n-1)%len(t.meta)]
		off = (last.off + last.len) % len(t.buf)
	}
	if len(t.buf) > 0 {
		k := copy(t.buf[off:], line)
		copy(t.buf, line[k:])
	}
	t.meta[(t.head+t.n)%len(t.meta)] = tailMeta{off: off, len: len(line), at: at, stderr: stderr}
	t.n++
	t.used += len(line)
}

// woken wakes followers, if any; t.mu is held. A new channel per addition
// only while someone follows.
func (t *Tail) woken() {
	if t.watched {
		close(t.wake)
		t.wake, t.watched = make(chan struct{}), false
	}
}

// growBuf enlarges the text ring to hold at least need bytes (at most
// maxBytes), laying the kept lines out from offset 0.
func (t *Tail) growBuf(need int) {
	size := min(max(2*len(t.buf), need, 4<<10), t.maxBytes)
	buf := make([]byte, size)
	off := 0
	for i := range t.n {
		m := &t.meta[(t.head+i)%len(t.meta)]
		t.text(buf[off:off+m.len], *m)
		m.off = off
		off += m.len
	}
	t.buf = buf
}

func (t *Tail) growMeta() {
	meta := make([]tailMeta, min(max(2*len(t.meta), 8), max(t.maxLines, t.n+1)))
	for i := range t.n {
		meta[i] = t.meta[(t.head+i)%len(t.meta)]
	}
	t.meta, t.head = meta, 0
}

// text copies line m's bytes into dst (len(dst) == m.len).
func (t *Tail) text(dst []byte, m tailMeta) {
	k := copy(dst, t.buf[m.off:min(m.off+m.len, len(t.buf))])
	copy(dst[k:], t.buf)
}

func (t *Tail) line(i int) TailLine {
	m := t.meta[(t.head+i)%len(t.meta)]
	b := make([]byte, m.len)
	t.text(b, m)
	stream := "stdout"
	if m.stderr {
		stream = "stderr"
	}
	return TailLine{Seq: t.next - uint64(t.n-i), Time: time.Unix(0, m.at), Stream: stream, Line: string(b)}
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
		out[i] = t.line(t.n - n + i)
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
	first := t.next - uint64(t.n) // Seq of the oldest kept line
	for i := range t.n {
		if first+uint64(i) >= seq {
			out = append(out, t.line(i))
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

// For returns name's tail for a reader to fill, or nil if tails are off
// (log.tail: 0), so that readers then skip the work altogether.
func (ts *Tails) For(name string) *Tail {
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	off := ts.maxLines <= 0
	ts.mu.Unlock()
	if off {
		return nil
	}
	return ts.Get(name)
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
		if n <= 0 {
			t.n, t.used, t.buf, t.meta = 0, 0, nil, nil
		}
		t.mu.Unlock()
	}
}
