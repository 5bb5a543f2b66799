package logs

import (
	"bytes"
	"io"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// Attach starts a goroutine that reads r (a child's stdout or stderr pipe) and
// passes each line to the sink under name and stream ("stdout", "stderr").
// Lines end at '\n'; a line longer than MaxLine is cut into MaxLine pieces; a
// last line without a newline is delivered at EOF.
//
// tap, if not nil, is called from the reader goroutine with every line
// (pieces of a cut line separately) in order; it must not keep the slice and
// should be quick, since it delays the stream.
//
// The returned channel is closed when r reaches EOF or fails. EOF is not the
// process's exit: a child may close its stdout early, and grandchildren may
// keep it open after the child exited. Attach never closes r; closing it
// ends the reader. After Close, Attach only returns a closed channel.
func (s *Sink) Attach(name, stream string, r io.Reader, tap func(line []byte)) <-chan struct{} {
	done := make(chan struct{})
	var timed func([]byte, time.Time)
	if tap != nil {
		timed = func(line []byte, _ time.Time) { tap(line) }
	}
	s.AttachFunc(name, stream, r, timed, func() { close(done) })
	return done
}

// AttachFunc is Attach with a callback in place of the channel: atEOF is
// called once, from the reader goroutine, when r reaches EOF or fails, after
// every line has gone to the sink (at once if the sink is closed). It must
// not block for long. Its tap also gets the instant of the read that brought
// the line: one clock reading per read, not per line (perf: a flood of a
// million lines into a log tail).
func (s *Sink) AttachFunc(name, stream string, r io.Reader, tap func(line []byte, at time.Time), atEOF func()) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		atEOF()
		return
	}
	s.readers.Add(1)
	s.mu.Unlock()
	src := s.newSource(name, stream)
	go func() {
		defer s.readers.Done()
		defer atEOF()
		s.read(src, r, tap)
	}()
}

// read splits r into lines and formats them. Each read's complete lines are
// formatted straight from the read buffer into a pooled batch, and the batch
// goes to the sink in one channel send, so a flood costs a send per read, not
// per line, and the sink only writes bytes. Only an unfinished line is kept
// between reads, in partial, which never grows beyond MaxLine plus one read.
// The read buffer starts at idleReadSize, so hundreds of quiet processes cost
// little memory, and grows to readSize and then busyPipeSize each time a read
// fills it. A batch is taken from the pool only once a read returned data.
func (s *Sink) read(src *source, r io.Reader, tap func([]byte, time.Time)) {
	buf := make([]byte, idleReadSize)
	var partial []byte
	var stampBuf [40]byte
	var stamp []byte
	var at time.Time // the read's instant, for tap
	var b *batch
	emit := func(line []byte, split bool) {
		b.data = s.format(b.data, stamp, src, line, split)
		b.lines++
		if split {
			s.split.Add(1)
		}
		if tap != nil {
			tap(line, at)
		}
	}
	// emitLine emits a complete line, in MaxLine pieces if it is longer.
	emitLine := func(line []byte) {
		for len(line) > MaxLine {
			emit(line[:MaxLine], true)
			line = line[MaxLine:]
		}
		emit(line, false)
	}
	// cut emits MaxLine pieces while partial is longer than MaxLine. At exactly
	// MaxLine it waits: the next byte may be the newline.
	cut := func() {
		off := 0
		for len(partial)-off > MaxLine {
			emit(partial[off:off+MaxLine], true)
			off += MaxLine
		}
		if off > 0 {
			partial = partial[:copy(partial, partial[off:])]
		}
	}
	for {
		n, err := r.Read(buf)
		if b == nil {
			b = s.getBatch()
		}
		if n > 0 || len(partial) > 0 {
			stamps := s.stamps.Load()
			if tap != nil || stamps {
				at = s.opts.Now()
			}
			if stamps {
				stamp = at.AppendFormat(stampBuf[:0], timeFormat)
			}
		}
		chunk := buf[:n]
		// Room for the formatted lines, so that append rarely has to copy.
		b.data = slices.Grow(b.data, s.formattedSize(n))
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				partial = append(partial, chunk...)
				cut()
				break
			}
			if len(partial) > 0 {
				partial = append(partial, chunk[:i]...)
				emitLine(partial)
				partial = partial[:0]
			} else {
				emitLine(chunk[:i])
			}
			chunk = chunk[i+1:]
		}
		if err != nil && len(partial) > 0 {
			emit(partial, false)
		}
		if b.lines > 0 {
			b.seq = s.seq.Add(1)
			s.records <- b // blocks while the sink is behind: back-pressure
			b = nil
		}
		if err != nil {
			if b != nil {
				s.release(b)
			}
			return
		}
		switch {
		case n < len(buf):
		case len(buf) < readSize:
			buf = make([]byte, readSize)
		case len(buf) < busyPipeSize: // a busy stream
			growPipe(r, busyPipeSize)
			buf = make([]byte, busyPipeSize)
		}
	}
}

// growPipe enlarges the buffer of the pipe r to size, for a stream whose
// read just came back full (the pipe was full): the child then blocks, and
// wakes the reader, several times less often, which saves ~20% wall time in
// BenchmarkMillionLines (wakeups are dear in VMs). Only busy streams grow,
// because the kernel counts pipe buffers per user: past pipe-user-pages-soft
// (64 MiB by default), an unprivileged user's new pipes get 8 KiB. Failure
// (not a pipe, over the limit) is harmless.
func growPipe(r io.Reader, size int) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	// SyscallConn, not Fd: Fd would switch the file to blocking mode, and
	// Close could no longer interrupt a pending Read.
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size)
		})
	}
}
