// Package logs carries child output to podvisor's stdout: the pump, one
// goroutine waiting on every child's pipes with epoll, splits lines (at most
// MaxLine bytes) and formats them (`name | line`, or one JSON object per
// line), and a single sink goroutine writes them, so lines are never torn or
// interleaved. (Other readers, such as tests', get a goroutine each.)
//
// Readers hand the sink batches (the formatted lines of one read, or of one
// pump round) over a bounded channel. When the writer is slow the channel
// fills, readers block,
// the pipes fill, and children block in write: back-pressure instead of loss.
// When the writer is broken (EPIPE after `podvisor run | head -1`) the sink
// keeps draining and counts what it discards, so children never block forever.
// podvisor's own messages (Logger) go through the same sink, in order with
// child lines, so they are never interleaved with them; but they never block
// the caller: if the sink is stuck, they are dropped and counted.
package logs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MaxLine is the longest line passed on whole; longer lines are split into
// pieces of MaxLine bytes.
const MaxLine = 64 << 10

const (
	queueLen     = 16        // batches in flight between readers and the sink
	ownQueueLen  = 256       // podvisor's own messages waiting for the sink
	flushSize    = 64 << 10  // the sink writes when this much is buffered
	idleReadSize = 512       // first read buffer of a stream (most are quiet: RSS per child)
	readSize     = 64 << 10  // one read from a child's pipe (its default capacity)
	busyPipeSize = 256 << 10 // pipe capacity and read size of a busy stream, see growPipe
	maxPooled    = 1 << 20   // bigger batches are not kept for reuse
)

// Options configures a Sink. The zero value writes text without timestamps.
type Options struct {
	Format     string           // "text" (default) or "json"
	Width      int              // text: pad process names to this width
	Timestamps bool             // text: prefix each line with its time (JSON always has "time")
	Now        func() time.Time // default time.Now
	Level      slog.Leveler     // minimum level of Logger; default Info
	// StallTimeout bounds a write to a writer with write deadlines (a pipe
	// in Go's poller, see PollableStdout): a write stuck that long drops
	// its lines, and the lines after it until a write gets through again,
	// so that no child waits on a stdout nobody reads. 0 means
	// DefaultStallTimeout; < 0 blocks as long as the writer does. A writer
	// without deadlines blocks as long as it does in any case.
	StallTimeout time.Duration
}

// DefaultStallTimeout is Options.StallTimeout's default.
const DefaultStallTimeout = time.Second

// deadliner is a writer with write deadlines (*os.File on a pipe or socket
// in Go's poller). While writes are stalled, the sink does not wait at all:
// it writes what the pipe takes at once through SyscallConn, if there is
// one, and drops the rest.
type deadliner interface {
	SetWriteDeadline(t time.Time) error
}

type rawConner interface {
	SyscallConn() (syscall.RawConn, error)
}

// Sink writes formatted lines to one io.Writer from a single goroutine.
type Sink struct {
	w      io.Writer
	json   atomic.Bool // JSON lines; switched live by SetFormat (live.go)
	stamps atomic.Bool // lines carry a time
	opts   Options
	own    *source
	logger *slog.Logger

	dl       deadliner       // w's deadlines, or nil: see Options.StallTimeout
	raw      syscall.RawConn // w's fd for tries without waiting, or nil
	records  chan *batch     // child lines; bounded, so a slow writer pushes back
	ownQueue chan *batch     // podvisor's messages; never blocks the sender

	mu        sync.Mutex // guards closed and readers.Add against Close
	closed    bool
	closeOnce sync.Once
	readers   sync.WaitGroup
	stopped   atomic.Bool   // Close has begun: own messages are dropped
	done      chan struct{} // closed when the sink goroutine has exited

	pumpOnce      sync.Once // see AttachPipe
	pump          *pump
	pumpErr       error
	pumpFallbacks atomic.Uint64 // pipes read by a goroutine: no pump

	// The writer's state, guarded by wmu: the sink goroutine writes, and so
	// does a reader when nothing is in flight (see queue).
	wmu      sync.Mutex
	out      batch  // lines gathered for one write
	owe      []byte // the rest of a line a failed write cut, written first next time
	werr     error  // a permanent write error (EPIPE): everything is dropped
	outDrops dropEpisode
	inflight atomic.Int64 // batches queued (both queues) and not yet written

	seq        atomic.Uint64 // last batch sequence number handed out
	errp       atomic.Pointer[error]
	split      atomic.Uint64
	dropped    atomic.Uint64
	ownDropped atomic.Uint64
	pool       sync.Pool

	files files // log files by path (file.go)
	stats stats // dropped lines by process (stats.go)
}

// NewSink starts a sink writing to w. Close stops it.
func NewSink(w io.Writer, opts Options) *Sink {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Sink{
		w:        w,
		opts:     opts,
		records:  make(chan *batch, queueLen),
		ownQueue: make(chan *batch, ownQueueLen),
		done:     make(chan struct{}),
		out:      batch{data: make([]byte, 0, flushSize)},
	}
	if s.opts.StallTimeout == 0 {
		s.opts.StallTimeout = DefaultStallTimeout
	}
	if d, ok := w.(deadliner); ok && s.opts.StallTimeout > 0 && d.SetWriteDeadline(time.Time{}) == nil {
		s.dl = d
		if rc, ok := w.(rawConner); ok {
			s.raw, _ = rc.SyscallConn()
		}
	}
	s.json.Store(opts.Format == "json")
	s.stamps.Store(opts.Format == "json" || opts.Timestamps)
	s.pool.New = func() any { return new(batch) }
	s.own = s.newSource("podvisor", "", 0)
	s.logger = slog.New(s.newHandler())
	go s.run()
	return s
}

// Logger returns the logger for podvisor's own messages, shown under the name
// "podvisor". It never blocks: when the sink is stuck the message is dropped
// and counted (OwnDropped).
func (s *Sink) Logger() *slog.Logger { return s.logger }

// SplitLines returns how many times a line longer than MaxLine was cut.
func (s *Sink) SplitLines() uint64 { return s.split.Load() }

// Dropped returns how many lines were discarded because writing failed.
func (s *Sink) Dropped() uint64 { return s.dropped.Load() }

// OwnDropped returns how many of podvisor's own messages were discarded
// because the sink could not keep up.
func (s *Sink) OwnDropped() uint64 { return s.ownDropped.Load() }

// Err returns the write error that made the sink discard everything from
// then on (EPIPE, say), or nil. A full disk or a stalled writer drops lines
// only while it lasts (DroppedLines counts them).
func (s *Sink) Err() error {
	if p := s.errp.Load(); p != nil {
		return *p
	}
	return nil
}

// Close waits for every attached reader to reach EOF (close their files to
// end them early), writes everything queued, and stops the sink. It returns
// Err, or ctx.Err() if ctx ends first: a writer that blocks forever (stdout
// nobody reads) must not keep podvisor from exiting (D9). Messages logged
// while closing may be lost. Close may be called again, for example with a
// longer deadline.
func (s *Sink) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		go func() {
			s.readers.Wait()
			s.stopPump()
			s.closeFiles()
			s.stopped.Store(true)
			close(s.records)
		}()
	})
	select {
	case <-s.done:
		return s.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the sink goroutine. It writes batches in the order they were queued
// (by sequence number across both queues), so that a podvisor message logged
// after a child's output was read (say, its exit) comes after that output.
func (s *Sink) run() {
	defer close(s.done)
	var rec, own *batch // the next batch from each queue
	recOpen := true
	for {
		if rec == nil && recOpen {
			select {
			case b, ok := <-s.records:
				rec, recOpen = b, ok
			default:
			}
		}
		if own == nil {
			select {
			case own = <-s.ownQueue:
			default:
			}
		}
		switch {
		case rec != nil && (own == nil || rec.seq < own.seq):
			s.written(rec)
			rec = nil
		case own != nil:
			s.written(own)
			own = nil
		case !recOpen:
			s.wmu.Lock()
			s.flush()
			s.wmu.Unlock()
			return
		default:
			s.wmu.Lock()
			s.flush() // nothing waiting: keep latency low
			s.wmu.Unlock()
			select {
			case b, ok := <-s.records:
				rec, recOpen = b, ok
			case own = <-s.ownQueue:
			}
		}
	}
}

// written writes b for the sink goroutine.
func (s *Sink) written(b *batch) {
	s.wmu.Lock()
	s.write(b)
	s.inflight.Add(-1)
	s.wmu.Unlock()
}

// write passes b's formatted lines on (wmu held): small batches are gathered in the
// output buffer (written when the queue is empty or the buffer is full), big
// ones are written as they are, saving a copy. What is buffered is flushed
// before a big batch is written, so that nothing overtakes earlier lines.
func (s *Sink) write(b *batch) {
	defer s.release(b)
	big := len(b.data) >= flushSize/2
	if len(s.out.data)+len(b.data) > flushSize || big {
		s.flush()
	}
	if big {
		s.writeOut(b)
		return
	}
	s.out.data = append(s.out.data, b.data...)
	s.out.lines += b.lines
	s.out.counts = appendCounts(s.out.counts, b.counts)
}

// flush writes the output buffer (wmu held).
func (s *Sink) flush() {
	if len(s.out.data) == 0 {
		return
	}
	s.writeOut(&s.out)
	s.out.data = s.out.data[:0]
	s.out.lines = 0
	clear(s.out.counts)
	s.out.counts = s.out.counts[:0]
}

// writeOut writes b's lines to the writer (wmu held). A write that fails
// drops the lines it did not write, counted against their processes; a line
// it cut in the middle is finished first at the next write, so that output
// stays whole lines. Only EPIPE (and errors other than a full disk or a
// stall) is final: from then on everything is dropped.
func (s *Sink) writeOut(b *batch) {
	if s.werr != nil {
		s.drop(b, 0, ReasonClosed)
		return
	}
	if len(s.owe) > 0 {
		n, err := s.out1(s.owe)
		s.owe = s.owe[n:]
		if err != nil {
			s.outFailed(b, 0, err)
			return
		}
	}
	n, err := s.out1(b.data)
	if err == nil {
		s.outDrops.end(s, "stdout")
		return
	}
	written := uint64(bytes.Count(b.data[:n], nl))
	if why := reason(err); n > 0 && b.data[n-1] != '\n' && (why == ReasonFull || why == ReasonBlocked) {
		end := n + bytes.IndexByte(b.data[n:], '\n') + 1
		s.owe = append(s.owe[:0], b.data[n:end]...)
		written++
	}
	s.outFailed(b, written, err)
}

// outFailed drops b's lines from the written-th on after a failed write.
func (s *Sink) outFailed(b *batch, written uint64, err error) {
	why := reason(err)
	if why != ReasonFull && why != ReasonBlocked {
		s.werr = err
		s.errp.Store(&err)
		s.owe = nil
	}
	s.drop(b, written, why)
	if s.werr == nil {
		s.outDrops.add(s, "stdout", why, err, b.lines-written)
	}
}

// out1 is one write to the writer (wmu held): bounded by the stall timeout,
// or while writes are stalled, what the pipe takes without waiting.
func (s *Sink) out1(p []byte) (int, error) {
	if s.dl == nil {
		return s.w.Write(p)
	}
	done := 0
	if s.outDrops.on {
		if s.raw == nil {
			_ = s.dl.SetWriteDeadline(time.Now().Add(time.Millisecond))
			return s.w.Write(p)
		}
		_ = s.dl.SetWriteDeadline(time.Time{}) // an expired one would fail the try untried
		n, err := tryWrite(s.raw, p)
		if n == 0 || !errors.Is(err, errStalled) {
			return n, err
		}
		// The pipe took something: its reader is back. Write the rest
		// as usual (bounded by the stall timeout).
		s.outDrops.end(s, "stdout")
		done, p = n, p[n:]
	}
	_ = s.dl.SetWriteDeadline(time.Now().Add(s.opts.StallTimeout))
	n, err := s.w.Write(p)
	return done + n, err
}

// errStalled is a try that found the pipe full.
var errStalled = os.ErrDeadlineExceeded

// tryWrite writes what fd takes of p now, without waiting for room.
func tryWrite(rc syscall.RawConn, p []byte) (int, error) {
	var n int
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, err := unix.Write(int(fd), p[n:])
			if m > 0 {
				n += m
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = err
				break
			}
		}
		return true // never wait for the poller
	})
	switch {
	case err != nil:
		return n, err
	case errors.Is(werr, unix.EAGAIN):
		return n, errStalled
	case werr != nil:
		return n, os.NewSyscallError("write", werr)
	}
	return n, nil
}

func (s *Sink) release(b *batch) {
	if cap(b.data) > maxPooled {
		return // unusually big (long escaped lines); let the GC have it
	}
	b.data = b.data[:0]
	b.lines = 0
	clear(b.counts)
	b.counts = b.counts[:0]
	s.pool.Put(b)
}

func (s *Sink) getBatch() *batch { return s.pool.Get().(*batch) }

// batch is a run of formatted lines from one source, in order.
type batch struct {
	seq    uint64 // queueing order across all sources
	data   []byte // formatted output, each line ending in '\n'
	lines  uint64
	counts []srcCount // lines per source, in order, for drop accounting
}
