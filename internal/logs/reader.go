package logs

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Attach starts a goroutine that reads r and passes each line to the sink
// under name and stream ("stdout", "stderr"). Lines end at '\n'; a line
// longer than MaxLine is cut into MaxLine pieces; a last line without a
// newline is delivered at EOF. A child's pipes go through AttachPipe
// instead, which needs no goroutine per stream.
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
	s.AttachFunc(name, stream, r, nil, tap, func() { close(done) })
	return done
}

// AttachFunc is Attach with a callback in place of the channel: atEOF is
// called once, from the reader goroutine, when r reaches EOF or fails, after
// every line has gone to the sink (at once if the sink is closed). It must
// not block for long. tail, if not nil, keeps the stream's last lines, each
// with the instant of the read that brought it.
func (s *Sink) AttachFunc(name, stream string, r io.Reader, tail *Tail, tap func(line []byte), atEOF func()) {
	if !s.addReader() {
		atEOF()
		return
	}
	sp := newSplitter(s.newSource(name, stream, 0), stream, tail, tap)
	go func() {
		defer s.readers.Done()
		defer atEOF()
		s.read(sp, r)
	}()
}

// addReader counts a new stream for Close to wait for; false once Close has
// begun.
func (s *Sink) addReader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.readers.Add(1)
	return true
}

// read is AttachFunc's reader goroutine. The read buffer starts at
// idleReadSize, so quiet streams cost little memory, and grows to readSize
// and then busyPipeSize each time a read fills it.
func (s *Sink) read(sp *splitter, r io.Reader) {
	buf := make([]byte, idleReadSize)
	var stampBuf [40]byte
	var b *batch
	for {
		n, err := r.Read(buf)
		if b == nil {
			b = s.getBatch()
		}
		if n > 0 || (err != nil && len(sp.partial) > 0) {
			stamp, at := s.readStamp(stampBuf[:0], sp.tail != nil || sp.file != nil)
			stamp = sp.stamp(stamp, stampBuf[:0], at)
			sp.feed(s, b, buf[:n], stamp, at)
			if err != nil {
				sp.finish(s, b, stamp, at)
			}
		}
		switch {
		case sp.file != nil || sp.off:
			sp.written(s, b)
		case b.lines > 0:
			s.queue(b) // blocks while the sink is behind: back-pressure
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

// readStamp returns the instant of a read for tails (zero unless wanted or
// lines carry a time) and its formatted stamp, appended to dst (nil unless
// lines carry one): one clock reading per read, not per line.
func (s *Sink) readStamp(dst []byte, want bool) (stamp []byte, at time.Time) {
	stamps := s.stamps.Load()
	if want || stamps {
		at = s.opts.Now()
	}
	if stamps {
		stamp = at.AppendFormat(dst, timeFormat)
	}
	return stamp, at
}

// queue hands a batch of lines to the sink goroutine, in sequence order
// with podvisor's own messages. It blocks while the sink is behind.
//
// A big batch (a flood) is written by the caller itself when nothing is
// queued or being written: the pump then reads, formats and writes on one
// thread, where a hand-off to the sink goroutine had a third thread
// competing with the child for the CPUs (1.2x the direct write with one
// Go P against 1.5x with two, on 2 CPUs). Holding wmu with nothing in
// flight means no earlier line can be waiting anywhere. Small batches keep
// the queue's slack: a stalled stdout does not hold up their EOF (and the
// news of their process's exit) until the queue is full.
func (s *Sink) queue(b *batch) {
	if len(b.data) >= flushSize/2 && s.inflight.Load() == 0 && s.wmu.TryLock() {
		if s.inflight.Load() == 0 {
			b.seq = s.seq.Add(1)
			s.write(b)
			s.flush()
			s.wmu.Unlock()
			return
		}
		s.wmu.Unlock()
	}
	s.inflight.Add(1)
	b.seq = s.seq.Add(1)
	s.records <- b
}

// splitter turns one stream's bytes into formatted lines. Each read's
// complete lines are formatted straight from the read buffer into a batch
// (or, for a log file that takes the bare lines, written from it as they
// are); only an unfinished line is kept between reads, in partial, which
// never grows beyond MaxLine plus one read.
type splitter struct {
	src     *source
	file    *File // lines go to this file, not the sink
	off     bool  // lines go nowhere (tail and tap still see them)
	stderr  bool
	tap     func(line []byte)
	tail    *Tail
	partial []byte
	kept    [][]byte // lines for the tail not yet added, in the read buffer or partial
	head    []byte   // what each line of the current read begins with (textHead, jsonHead)
	raw     batch    // a read's lines written to the file as they are (writeRaw)
}

// maxKept bounds kept: a read of 256 KiB may hold 128 Ki lines.
const maxKept = 4096

func newSplitter(src *source, stream string, tail *Tail, tap func([]byte)) *splitter {
	return &splitter{src: src, stderr: stream == "stderr", tail: tail, tap: tap}
}

// feed takes data, the stream's next bytes after the unfinished line. A
// read without a line end only adds to that line (and cuts it at MaxLine):
// a line dribbled out a byte at a time costs no more than one written at
// once. Otherwise the line is finished with data's first line and passed
// on, and the rest of data from there.
func (sp *splitter) feed(s *Sink, b *batch, data []byte, stamp []byte, at time.Time) {
	if len(sp.partial) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			sp.partial = append(sp.partial, data...)
			sp.cut(s, b, stamp, at)
			sp.flushTail(at)
			return
		}
		sp.partial = append(sp.partial, data[:i+1]...)
		sp.lines(s, b, sp.partial, stamp, at)
		sp.flushTail(at) // kept may point into partial
		sp.partial = sp.partial[:0]
		data = data[i+1:]
	}
	sp.consume(s, b, data, stamp, at)
}

// take is feed for n bytes just read into buf[head:], with head bytes of
// room before them (the pump keeps MaxLine): when they finish the
// unfinished line, that line, at most MaxLine bytes (see cut), is copied
// into the room, so that it and every other complete line of the read are
// in one slice of buf, and go on from there at once (for a file of bare
// lines, in one write).
func (sp *splitter) take(s *Sink, b *batch, buf []byte, head, n int, stamp []byte, at time.Time) {
	data := buf[head : head+n]
	if p := len(sp.partial); p > 0 {
		if p > head || bytes.IndexByte(data, '\n') < 0 {
			sp.feed(s, b, data, stamp, at)
			return
		}
		copy(buf[head-p:head], sp.partial)
		sp.partial = sp.partial[:0]
		data = buf[head-p : head+n]
	}
	sp.consume(s, b, data, stamp, at)
}

// consume passes on chunk's complete lines (chunk begins at a line's
// start: see feed and take); the unfinished line at its end is kept for
// the next read, and cut into MaxLine pieces once it is longer.
func (sp *splitter) consume(s *Sink, b *batch, chunk []byte, stamp []byte, at time.Time) {
	end := lastNL(chunk) + 1
	if end > 0 {
		sp.lines(s, b, chunk[:end], stamp, at)
	}
	sp.partial = append(sp.partial[:0], chunk[end:]...)
	sp.cut(s, b, stamp, at)
	sp.flushTail(at) // before the read buffer is reused
}

// lines passes on whole, one or more complete lines each ending in '\n'.
// The common case, no line longer than MaxLine and no tap to call per
// line, is done per read rather than per line: the whole read is formatted
// by one loop (appendTextLines, appendJSONLines) or, for a file of bare
// lines, written as it is (writeRaw); the lines are counted once, for drop
// accounting and the tail, which looks only at the lines that stay in it
// (Tail.addRegion). Otherwise each line goes through emitLine.
func (sp *splitter) lines(s *Sink, b *batch, whole []byte, stamp []byte, at time.Time) {
	if sp.tap != nil || hasLongLine(whole) {
		for len(whole) > 0 {
			i := bytes.IndexByte(whole, '\n')
			sp.emitLine(s, b, whole[:i], stamp, at)
			whole = whole[i+1:]
		}
		return
	}
	n, formatted := 0, !sp.off
	switch {
	case sp.off:
		if sp.tail != nil {
			n = bytes.Count(whole, nl)
		}
	case sp.file != nil:
		switch json := sp.file.style.Load().json; {
		case json:
			sp.head = jsonHead(sp.head[:0], stamp, sp.src)
			b.data = slices.Grow(b.data, 2*len(whole)+256)
			b.data, n = appendJSONLines(b.data, sp.head, whole)
		case stamp != nil:
			sp.head = append(append(sp.head[:0], stamp...), ' ')
			b.data = slices.Grow(b.data, 2*len(whole)+256)
			b.data, n = appendTextLines(b.data, sp.head, whole)
		default: // the bare lines: the bytes as they came
			n, formatted = bytes.Count(whole, nl), false
			sp.writeRaw(s, b, whole, n)
		}
	default:
		b.data = slices.Grow(b.data, s.formattedSize(len(whole)))
		if s.json.Load() {
			sp.head = jsonHead(sp.head[:0], stamp, sp.src)
			b.data, n = appendJSONLines(b.data, sp.head, whole)
		} else {
			sp.head = textHead(sp.head[:0], stamp, sp.src)
			b.data, n = appendTextLines(b.data, sp.head, whole)
		}
	}
	if formatted {
		b.lines += uint64(n)
		b.countN(sp.src, uint64(n))
	}
	if sp.tail != nil {
		sp.flushTail(at)
		sp.tail.addRegion(sp.stderr, whole, n, at)
	}
}

// writeRaw writes whole, n complete lines, to the file as they are, from
// the read buffer: a file of bare lines (text without timestamps) holds
// what the child wrote, so a read needs no copy and no formatting. Lines
// already in b go first.
func (sp *splitter) writeRaw(s *Sink, b *batch, whole []byte, n int) {
	if b.lines > 0 {
		sp.written(s, b)
	}
	r := &sp.raw
	r.data, r.lines = whole, uint64(n)
	r.counts = append(r.counts[:0], srcCount{sp.src, uint64(n)})
	s.writeFile(sp.file, r)
	r.data = nil
}

// hasLongLine reports whether some line of whole (complete lines) is
// longer than MaxLine, without looking at every byte: a window of MaxLine+1
// bytes that holds a line end holds only lines that fit up to it.
func hasLongLine(whole []byte) bool {
	for p := 0; len(whole)-p > MaxLine+1; {
		q := lastNL(whole[p : p+MaxLine+1])
		if q < 0 {
			return true
		}
		p += q + 1
	}
	return false
}

// lastNL is bytes.LastIndexByte(b, '\n'), eight bytes at a time: a read's
// last line end, and a tail's lines from the end of a read.
func lastNL(b []byte) int {
	i := len(b)
	for i >= 8 && hasZero(binary.LittleEndian.Uint64(b[i-8:])^('\n'*ones)) == 0 {
		i -= 8
	}
	for i > 0 {
		i--
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

// finish emits the unfinished last line, at EOF.
func (sp *splitter) finish(s *Sink, b *batch, stamp []byte, at time.Time) {
	if len(sp.partial) > 0 {
		sp.emitLine(s, b, sp.partial, stamp, at) // cut may have waited (cutLen)
		sp.flushTail(at)
		sp.partial = nil
	}
}

// stamp returns the stamp for this stream's lines read at at: the sink's
// (given), or for a file, the file's own, formatted into buf.
func (sp *splitter) stamp(sinkStamp, buf []byte, at time.Time) []byte {
	switch {
	case sp.file == nil:
		return sinkStamp
	case sp.file.wantsStamp():
		return at.AppendFormat(buf, timeFormat)
	}
	return nil
}

// written passes the lines of a file or off stream on and empties b.
func (sp *splitter) written(s *Sink, b *batch) {
	if sp.file != nil && b.lines > 0 {
		s.writeFile(sp.file, b)
	}
	b.data = b.data[:0]
	b.lines = 0
	clear(b.counts)
	b.counts = b.counts[:0]
}

func (sp *splitter) emit(s *Sink, b *batch, line []byte, split bool, stamp []byte, at time.Time) {
	switch {
	case sp.off:
	case sp.file != nil:
		b.data = sp.file.format(b.data, stamp, sp.src, line, split)
		b.lines++
		b.countN(sp.src, 1)
	default:
		b.data = s.format(b.data, stamp, sp.src, line, split)
		b.lines++
		b.countN(sp.src, 1)
	}
	if split {
		s.split.Add(1)
	}
	if sp.tap != nil {
		sp.tap(line)
	}
	if sp.tail != nil {
		if len(sp.kept) == maxKept {
			sp.flushTail(at)
		}
		sp.kept = append(sp.kept, line)
	}
}

// flushTail adds the kept lines to the tail.
func (sp *splitter) flushTail(at time.Time) {
	if len(sp.kept) == 0 {
		return
	}
	sp.tail.addLines(sp.stderr, sp.kept, at)
	clear(sp.kept) // let go of the buffers
	sp.kept = sp.kept[:0]
}

// emitLine emits a complete line, in pieces of at most MaxLine bytes if it
// is longer (see cutLen).
func (sp *splitter) emitLine(s *Sink, b *batch, line []byte, stamp []byte, at time.Time) {
	for len(line) > MaxLine {
		n, _ := cutLen(line, true)
		sp.emit(s, b, line[:n], true, stamp, at)
		line = line[n:]
	}
	sp.emit(s, b, line, false, stamp, at)
}

// cut emits pieces of at most MaxLine bytes while partial is longer than
// MaxLine. At exactly MaxLine it waits: the next byte may be the newline;
// so it does when the piece would end inside a UTF-8 character whose last
// bytes have not come yet.
func (sp *splitter) cut(s *Sink, b *batch, stamp []byte, at time.Time) {
	off := 0
	for len(sp.partial)-off > MaxLine {
		n, wait := cutLen(sp.partial[off:], false)
		if wait {
			break
		}
		sp.emit(s, b, sp.partial[off:off+n], true, stamp, at)
		off += n
	}
	if off > 0 {
		sp.flushTail(at) // the pieces are in partial, which moves now
		sp.partial = sp.partial[:copy(sp.partial, sp.partial[off:])]
	}
}

// cutLen returns where to cut line, longer than MaxLine: at MaxLine, or a
// little before it (at most 3 bytes) when a valid UTF-8 character begins
// there and ends past it, so that no piece ends in half a character (which
// a JSON line would show as U+FFFD twice). Invalid bytes are cut anywhere.
// wait means the character is not complete in line yet and may turn out
// valid: cut again when more bytes have come (final: they never will).
func cutLen(line []byte, final bool) (n int, wait bool) {
	for i := MaxLine - 1; i >= MaxLine-utf8.UTFMax+1; i-- {
		c := line[i]
		if c&0xc0 == 0x80 { // a continuation byte: look further back
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		if !final && !utf8.FullRune(line[i:]) {
			return 0, true
		}
		if _, size := utf8.DecodeRune(line[i:]); size > 1 && i+size > MaxLine {
			return i, false
		}
		break
	}
	return MaxLine, false
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
