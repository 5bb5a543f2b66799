package logs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpenPipe makes a pipe for a child's stdout or stderr: the read end as a
// raw non-blocking fd for AttachPipe, the write end as a file for the child
// (blocking, as programs expect). Both are close-on-exec.
func OpenPipe() (r int, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return -1, nil, os.NewSyscallError("pipe2", err)
	}
	// Only the read end: the flag belongs to the open file, which the
	// child's end does not share.
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return -1, nil, os.NewSyscallError("fcntl", err)
	}
	return p[0], os.NewFile(uintptr(p[1]), "|1"), nil
}

// AttachPipe is AttachFunc for the read end of a pipe (from OpenPipe), read
// by the sink's pump: one goroutine waiting on every attached pipe with
// epoll, instead of a goroutine per stream. The sink owns fd from then on and
// closes it at EOF (at once if the sink is closed). tail and tap are as for
// AttachFunc. tap and atEOF are called
// from the pump goroutine, atEOF once every line of the stream has been
// queued; both must be quick, as they hold up every stream.
//
// Why a pump: when hundreds of children exit together, a goroutine per
// stream means hundreds of wake-ups, reads of 0 bytes and netpoll
// deregistrations before the last exit can be told to the supervisor (the
// 200-wide fan-in stop), and a stack and read buffer per stream (RSS). The
// pump takes each hung-up pipe from one epoll_wait with one close, and
// shares one read buffer.
func (s *Sink) AttachPipe(name, stream string, fd int, tail *Tail, tap func(line []byte), atEOF func()) {
	s.AttachStream(fd, Stream{Name: name, Stream: stream, Tail: tail, Tap: tap, AtEOF: atEOF})
}

// Stream is one output stream of one incarnation of a process, for
// AttachStream.
type Stream struct {
	Name        string
	Stream      string // "stdout" or "stderr"
	Incarnation uint64 // shown in JSON lines; 0 leaves it out
	Tail        *Tail
	Tap         func(line []byte)
	AtEOF       func()
	File        *File // its lines go to this file (Sink.File) instead of the sink
	Off         bool  // its lines go nowhere; Tail and Tap still see them
}

// AttachStream is AttachPipe with every setting of the stream: a child's
// pipe, read by the pump.
func (s *Sink) AttachStream(fd int, o Stream) {
	name, stream, tail, tap, atEOF := o.Name, o.Stream, o.Tail, o.Tap, o.AtEOF
	if !s.addReader() {
		unix.Close(fd)
		atEOF()
		return
	}
	sp := newSplitter(s.newSource(name, stream, o.Incarnation), stream, tail, tap)
	sp.file, sp.off = o.File, o.Off
	st := &pipeStream{splitter: sp, fd: fd, atEOF: atEOF}
	p, err := s.startPump()
	if err == nil {
		err = p.add(st)
	}
	if err != nil {
		// No epoll (fds exhausted, say): a reader goroutine will do.
		s.pumpFallbacks.Add(1)
		f := os.NewFile(uintptr(fd), name+" "+stream)
		go func() {
			defer s.readers.Done()
			defer atEOF()
			defer f.Close()
			s.read(st.splitter, f)
		}()
	}
}

// startPump starts the pump on first use.
func (s *Sink) startPump() (*pump, error) {
	s.pumpOnce.Do(func() {
		s.pump, s.pumpErr = newPump(s)
		if s.pumpErr == nil {
			go s.pump.run()
		}
	})
	return s.pump, s.pumpErr
}

// stopPump ends the pump once every stream has ended (Close, after the
// readers are done).
func (s *Sink) stopPump() {
	s.pumpOnce.Do(func() { s.pumpErr = errors.New("sink closed") })
	if s.pump != nil {
		s.pump.shutdown()
	}
}

// pump reads every attached pipe of a sink from one goroutine. Pipes are
// registered edge-triggered; a read that fills the buffer may have left more
// behind, so its stream is read again in the next round without waiting for
// an event ("hot"), after the other ready streams: a flood cannot starve
// them.
type pump struct {
	s      *Sink
	epfd   int
	wait   syscall.RawConn // epfd in Go's netpoller, see waitEvents
	closer io.Closer       // of epfd
	wakefd int             // an eventfd, id 0: shutdown

	mu      sync.Mutex // guards the fields below; the pump holds it only to look up
	streams map[uint32]*pipeStream
	next    uint32
	stop    bool
}

// pipeStream is one attached pipe. Only the pump goroutine touches it once
// it is registered.
type pipeStream struct {
	*splitter
	id     uint32
	fd     int
	atEOF  func()
	grown  bool // the pipe was enlarged (see growPipe)
	queued bool // in the current round
	hung   bool // an event said: no writer left (so EOF follows the data)
	hup    bool // this round's event said: no writer left, and empty
}

// pumpEvents bounds the events taken per epoll_wait; more wait for the next
// round.
const pumpEvents = 256

func newPump(s *Sink) (*pump, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wakefd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	// Non-blocking, so that os.NewFile puts it in Go's netpoller.
	if _, err := unix.FcntlInt(uintptr(epfd), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(epfd)
		unix.Close(wakefd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(epfd), "log pump epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		unix.Close(wakefd)
		return nil, err
	}
	return &pump{s: s, epfd: epfd, wait: rc, closer: f, wakefd: wakefd, streams: make(map[uint32]*pipeStream)}, nil
}

// waitEvents collects ready events. The pump never blocks in epoll_wait:
// a goroutine blocked in a system call keeps its P, and a goroutine it just
// woke (the supervisor's loop, told of an exit) can wait there for sysmon,
// up to 10 ms (seen in the fan-in stop benchmark). Instead the epoll fd
// itself waits in Go's netpoller, which parks the pump like any reader.
func (p *pump) waitEvents(events []unix.EpollEvent, block bool) (int, error) {
	var n int
	var werr error
	err := p.wait.Read(func(fd uintptr) bool {
		n, werr = unix.EpollWait(int(fd), events, 0)
		if errors.Is(werr, unix.EINTR) {
			n, werr = 0, nil
		}
		return n > 0 || werr != nil || !block
	})
	if werr != nil {
		return 0, werr
	}
	return n, err
}

// add registers st. Its id, not its fd, goes into the event: a closed fd's
// number may be reused at once by the next pipe.
func (p *pump) add(st *pipeStream) error {
	p.mu.Lock()
	for p.next++; p.next == 0 || p.streams[p.next] != nil; p.next++ {
	}
	st.id = p.next
	p.streams[st.id] = st
	p.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(st.id)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, st.fd, &ev); err != nil {
		p.mu.Lock()
		delete(p.streams, st.id)
		p.mu.Unlock()
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

func (p *pump) shutdown() {
	p.mu.Lock()
	p.stop = true
	p.mu.Unlock()
	var one [8]byte
	one[0] = 1 // little-endian 1; the value does not matter, only the wake
	_, _ = unix.Write(p.wakefd, one[:])
}

// run is the pump goroutine. Each round: wait for events (not at all if a
// stream is hot), read each ready stream once into the shared buffer, format
// all lines of the round into one batch and queue it, then end the streams
// that hit EOF. Their atEOF runs after the queueing, so a message logged
// because of it (an exit) comes after their last lines (docs/reliability.md, B12).
func (p *pump) run() {
	// Reads go after MaxLine bytes of room, where a stream's unfinished
	// line is put before its next bytes (splitter.take).
	buf := make([]byte, MaxLine+busyPipeSize)
	var stampBuf, fstampBuf [40]byte
	fb := new(batch) // a file stream's lines, written after each read
	events := make([]unix.EpollEvent, pumpEvents)
	var round, hot, ended []*pipeStream
	for {
		n, err := p.waitEvents(events, len(hot) == 0)
		if err != nil {
			// Only a bug can get here (the epoll fd is ours); say so
			// rather than spin.
			p.s.logger.Error("log pump stopped", "err", os.NewSyscallError("epoll_wait", err))
			return
		}
		round = append(round[:0], hot...)
		for _, st := range hot {
			st.queued = true // so an event for it does not add it twice
		}
		hot = hot[:0]
		p.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			if ev.Fd == 0 {
				var v [8]byte
				_, _ = unix.Read(p.wakefd, v[:])
				if p.stop && len(p.streams) == 0 {
					p.mu.Unlock()
					p.closer.Close()
					unix.Close(p.wakefd)
					return
				}
				continue
			}
			st := p.streams[uint32(ev.Fd)]
			if st == nil {
				continue
			}
			// Sticky: a pipe's writers never come back.
			st.hung = st.hung || ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0
			if st.queued { // carried over hot: it is read anyway
				continue
			}
			st.queued = true
			st.hup = st.hung && ev.Events&unix.EPOLLIN == 0
			round = append(round, st)
		}
		p.mu.Unlock()
		if len(round) == 0 {
			continue
		}
		stamp, at := p.s.readStamp(stampBuf[:0], true)
		var fstamp []byte // files' stamps, made once per round when needed
		b := p.s.getBatch()
		for _, st := range round {
			st.queued = false
			eof := st.hup
			tb, tstamp := b, stamp
			if st.file != nil || st.off {
				tb = fb
				if st.file != nil && st.file.wantsStamp() {
					if fstamp == nil {
						fstamp = at.AppendFormat(fstampBuf[:0], timeFormat)
					}
					tstamp = fstamp
				} else {
					tstamp = nil
				}
			}
			if !eof {
				nr, rerr := unix.Read(st.fd, buf[MaxLine:])
				switch {
				case nr > 0:
					st.take(p.s, tb, buf, MaxLine, nr, tstamp, at)
					// A hang-up is a state, not an edge: no event
					// will come for the EOF behind this data.
					if nr == busyPipeSize || st.hung {
						hot = append(hot, st)
					}
					if !st.grown && nr >= readSize {
						st.grown = true
						_, _ = unix.FcntlInt(uintptr(st.fd), unix.F_SETPIPE_SZ, busyPipeSize)
					}
				case errors.Is(rerr, unix.EAGAIN):
				case errors.Is(rerr, unix.EINTR):
					hot = append(hot, st)
				default: // 0: EOF; an error ends the stream too
					eof = true
				}
			}
			if eof {
				st.finish(p.s, tb, tstamp, at)
				ended = append(ended, st)
			}
			if tb == fb {
				st.written(p.s, fb)
			}
			if len(b.data) >= maxPooled/2 { // bound a round's batch
				p.s.queue(b)
				b = p.s.getBatch()
			}
		}
		if b.lines > 0 {
			p.s.queue(b) // blocks while the sink is behind: back-pressure
		} else {
			p.s.release(b)
		}
		for _, st := range ended {
			p.end(st)
		}
		ended = ended[:0]
	}
}

// end closes a stream at EOF: unregistered by the close (no grandchild
// holds the read end: it is close-on-exec), then its callback.
func (p *pump) end(st *pipeStream) {
	p.mu.Lock()
	delete(p.streams, st.id)
	p.mu.Unlock()
	unix.Close(st.fd)
	st.atEOF()
	p.s.readers.Done()
}
