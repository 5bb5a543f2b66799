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
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
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
}

// Sink writes formatted lines to one io.Writer from a single goroutine.
type Sink struct {
	w      io.Writer
	json   atomic.Bool // JSON lines; switched live by SetFormat (live.go)
	stamps atomic.Bool // lines carry a time
	opts   Options
	own    *source
	logger *slog.Logger

	records  chan *batch // child lines; bounded, so a slow writer pushes back
	ownQueue chan *batch // podvisor's messages; never blocks the sender

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
	out      []byte
	pending  uint64 // lines in out
	werr     error
	inflight atomic.Int64 // batches queued (both queues) and not yet written

	seq        atomic.Uint64 // last batch sequence number handed out
	errp       atomic.Pointer[error]
	split      atomic.Uint64
	dropped    atomic.Uint64
	ownDropped atomic.Uint64
	pool       sync.Pool
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
		out:      make([]byte, 0, flushSize),
	}
	s.json.Store(opts.Format == "json")
	s.stamps.Store(opts.Format == "json" || opts.Timestamps)
	s.pool.New = func() any { return new(batch) }
	s.own = s.newSource("podvisor", "")
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

// Err returns the write error that made the sink discard output, or nil.
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
	if s.werr == nil && (len(s.out)+len(b.data) > flushSize || len(b.data) >= flushSize/2) {
		s.flush()
	}
	switch {
	case s.werr != nil:
		s.dropped.Add(b.lines)
	case len(b.data) >= flushSize/2:
		if _, err := s.w.Write(b.data); err != nil {
			s.fail(err, b.lines)
		}
	default:
		s.out = append(s.out, b.data...)
		s.pending += b.lines
	}
}

// flush writes the output buffer (wmu held).
func (s *Sink) flush() {
	if len(s.out) == 0 || s.werr != nil {
		return
	}
	_, err := s.w.Write(s.out)
	s.out = s.out[:0]
	if err != nil {
		s.fail(err, s.pending)
	}
	s.pending = 0
}

// fail records the first write error. From then on everything is discarded
// and counted, starting with the lines whose write failed.
func (s *Sink) fail(err error, lines uint64) {
	s.werr = err
	s.errp.Store(&err)
	s.dropped.Add(lines)
}

func (s *Sink) release(b *batch) {
	if cap(b.data) > maxPooled {
		return // unusually big (long escaped lines); let the GC have it
	}
	b.data = b.data[:0]
	b.lines = 0
	s.pool.Put(b)
}

func (s *Sink) getBatch() *batch { return s.pool.Get().(*batch) }

// batch is a run of formatted lines from one source, in order.
type batch struct {
	seq   uint64 // queueing order across all sources
	data  []byte // formatted output, each line ending in '\n'
	lines uint64
}
