package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/testproc"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	testproc.Main()
	os.Exit(m.Run())
}

func newReaper(t testing.TB) *proc.Reaper {
	r := proc.NewReaper(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// running is a child whose stdout and stderr are attached to a sink.
type running struct {
	*proc.Child
	out, err <-chan struct{} // closed at EOF of each stream
}

// attachChild starts argv with its output on pipes read by s's pump, as the
// supervisor's launcher does.
func attachChild(t testing.TB, r *proc.Reaper, s *Sink, name string, argv []string, tapOut, tapErr func([]byte)) running {
	t.Helper()
	or, ow, err := OpenPipe()
	if err != nil {
		t.Fatal(err)
	}
	er, ew, err := OpenPipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := proc.Spawn(r, proc.Spec{Argv: argv, Stdout: ow, Stderr: ew})
	ow.Close()
	ew.Close()
	if err != nil {
		unix.Close(or)
		unix.Close(er)
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Signal(syscall.SIGKILL) })
	out, errc := make(chan struct{}), make(chan struct{})
	s.AttachPipe(name, "stdout", or, nil, tapOut, func() { close(out) })
	s.AttachPipe(name, "stderr", er, nil, tapErr, func() { close(errc) })
	return running{c, out, errc}
}

func (c running) wait(t testing.TB, timeout time.Duration) proc.Exit {
	t.Helper()
	deadline := time.After(timeout * testproc.Slowdown())
	var ex proc.Exit
	for _, ch := range []<-chan struct{}{c.out, c.err} {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("pid %d: output not at EOF after %v", c.Pid(), timeout)
		}
	}
	select {
	case ex = <-c.Done():
	case <-deadline:
		t.Fatalf("pid %d did not exit within %v", c.Pid(), timeout)
	}
	return ex
}

// verifier checks, as the sink writes, that every text line is the next line
// testproc.Line would make for its process and stream: nothing lost,
// reordered, split or interleaved. It keeps no output, so millions of lines
// cost no memory.
type verifier struct {
	size    int
	partial []byte
	next    map[string]int // "name/o", "name/e" -> next expected sequence number
	lines   int            // child lines
	own     int            // podvisor's lines
	err     error
	want    []byte
}

func newVerifier(size int) *verifier {
	return &verifier{size: size, next: make(map[string]int)}
}

func (v *verifier) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			v.partial = append(v.partial, p...)
			break
		}
		line := p[:i]
		if len(v.partial) > 0 {
			v.partial = append(v.partial, line...)
			line = v.partial
		}
		v.check(line)
		v.partial = v.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (v *verifier) check(line []byte) {
	if v.err != nil {
		return
	}
	name, payload, ok := bytes.Cut(line, []byte(" | "))
	if !ok || len(payload) == 0 {
		v.err = fmt.Errorf("line %d unframed: %.80q", v.lines, line)
		return
	}
	if string(bytes.TrimSpace(name)) == "podvisor" {
		v.own++
		return
	}
	key := string(bytes.TrimSpace(name)) + "/" + string(payload[0])
	seq := v.next[key]
	v.want = testproc.Line(v.want[:0], payload[0], seq, v.size)
	if !bytes.Equal(payload, v.want) {
		v.err = fmt.Errorf("%s line %d: got %.80q, want %.80q", key, seq, payload, v.want)
		return
	}
	v.next[key] = seq + 1
	v.lines++
}

func (v *verifier) expect(t *testing.T, counts map[string]int) {
	t.Helper()
	if v.err != nil {
		t.Fatal(v.err)
	}
	if len(v.partial) > 0 {
		t.Fatalf("unterminated output: %.80q", v.partial)
	}
	for k, n := range counts {
		if v.next[k] != n {
			t.Errorf("%s: %d lines, want %d", k, v.next[k], n)
		}
	}
	if len(v.next) != len(counts) {
		t.Errorf("streams %v, want %v", v.next, counts)
	}
}

// 1,000,000 lines from a real child arrive complete and in order per stream,
// and the tap sees every line too.
func TestMillionLinesFromAChild(t *testing.T) {
	const n, size = 1_000_000, 100
	r := newReaper(t)
	v := newVerifier(size)
	s := NewSink(v, Options{Width: 5})
	var tapped [2]int
	c := attachChild(t, r, s, "gen", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"),
		func([]byte) { tapped[0]++ }, func([]byte) { tapped[1]++ })
	if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
		t.Fatalf("generator exited %d", ex.Code())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.expect(t, map[string]int{"gen/o": n / 2, "gen/e": n / 2})
	if tapped != [2]int{n / 2, n / 2} {
		t.Errorf("tapped %v lines, want %d per stream", tapped, n/2)
	}
	if s.Dropped() != 0 || s.SplitLines() != 0 {
		t.Errorf("dropped %d, split %d", s.Dropped(), s.SplitLines())
	}
}

// Two children flooding at once: every line is whole and in order.
func TestConcurrentFloodsDoNotInterleave(t *testing.T) {
	const n, size = 100_000, 200
	r := newReaper(t)
	v := newVerifier(size)
	s := NewSink(v, Options{Width: 3})
	var cs []running
	for _, name := range []string{"a", "b"} {
		cs = append(cs, attachChild(t, r, s, name, testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"), nil, nil))
	}
	for _, c := range cs {
		c.wait(t, 60*time.Second)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.expect(t, map[string]int{"a/o": n / 2, "a/e": n / 2, "b/o": n / 2, "b/e": n / 2})
}

// B10: binary garbage, NULs and invalid UTF-8 from a real child still give
// one valid JSON object per line.
func TestGarbageBecomesValidJSON(t *testing.T) {
	const seed, size = 7, 200_000
	r := newReaper(t)
	var out bytes.Buffer
	s := NewSink(&out, Options{Format: "json"})
	c := attachChild(t, r, s, "junk", testproc.Argv("random", strconv.Itoa(seed), strconv.Itoa(size)), nil, nil)
	c.wait(t, 10*time.Second)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := bytes.Split(testproc.Random(seed, size), []byte("\n"))
	if len(want[len(want)-1]) == 0 {
		want = want[:len(want)-1]
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, l := range got {
		var rec struct{ Process, Stream, Line string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d: %v: %q", i, err, l)
		}
		w, _ := json.Marshal(string(want[i]))
		var ws string
		_ = json.Unmarshal(w, &ws)
		if rec.Process != "junk" || rec.Stream != "stdout" || rec.Line != ws {
			t.Fatalf("line %d: %+v, want line %q", i, rec, ws)
		}
	}
}

// B8: a child closing stdout early is EOF for that stream only; the child
// keeps running and its stderr keeps flowing.
func TestChildClosesStdoutEarly(t *testing.T) {
	r := newReaper(t)
	var out syncBuffer
	s := NewSink(&out, Options{})
	ready := make(chan struct{}, 1)
	c := attachChild(t, r, s, "p", testproc.Argv("close-out"), nil, func(l []byte) {
		if bytes.HasPrefix(l, []byte("ready")) {
			ready <- struct{}{}
		}
	})
	<-c.out
	<-ready
	select {
	case ex := <-c.Done():
		t.Fatalf("child exited (%d) when it only closed stdout", ex.Code())
	default:
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := c.wait(t, 5*time.Second); ex.Code() != 0 {
		t.Fatalf("exit %d", ex.Code())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"p | before\n", fmt.Sprintf("p | ready pid=%d\n", c.Pid()), "p | signal TERM\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output %q lacks %q", got, want)
		}
	}
}

// B12: the last line, even without a newline, is delivered.
func TestFinalLineWithoutNewline(t *testing.T) {
	r := newReaper(t)
	var out bytes.Buffer
	s := NewSink(&out, Options{})
	for range 20 {
		c := attachChild(t, r, s, "p", testproc.Argv("print", `first\nlast`), nil, nil)
		c.wait(t, 5*time.Second)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("p | first\np | last\n", 20); out.String() != want {
		t.Fatalf("got %q", out.String())
	}
}

// A slow consumer slows the child down (back-pressure) and loses nothing;
// podvisor's own logging never blocks meanwhile (D9).
func TestSlowWriterPushesBack(t *testing.T) {
	const n, size = 200_000, 100 // 20 MB: far more than the pipe and queue hold
	r := newReaper(t)
	v := newVerifier(size)
	w := &gateWriter{w: v, open: make(chan struct{})}
	s := NewSink(w, Options{})
	c := attachChild(t, r, s, "slow", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "o"), nil, nil)
	// The pump is stuck in a write (it writes floods itself) or the queue
	// is full; either way the pipe fills up and the child blocks.
	testproc.Eventually(t, 10*time.Second, "pipe full", func() bool { return pipeBytes(t, c.Pid(), 1) == busyPipeSize })
	select {
	case ex := <-c.Done():
		t.Fatalf("child finished (%d) although its output cannot have been written", ex.Code())
	default:
	}
	if got := pipeSize(t, c.Pid(), 1); got != busyPipeSize {
		t.Errorf("pipe of a stream that filled it: %d bytes, want %d", got, busyPipeSize)
	}
	if got := pipeSize(t, c.Pid(), 2); got != 64<<10 {
		t.Errorf("pipe of a quiet stream: %d bytes, want the default 64 KiB", got)
	}
	start := time.Now()
	for i := range 1000 {
		s.Logger().Info("still responsive", "i", i)
	}
	if took := time.Since(start); took > time.Second || s.OwnDropped() == 0 {
		t.Errorf("1000 own messages took %v, %d dropped; want quick, some dropped", took, s.OwnDropped())
	}
	close(w.open)
	if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
		t.Fatalf("exit %d", ex.Code())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.expect(t, map[string]int{"slow/o": n})
	if s.Dropped() != 0 || uint64(v.own)+s.OwnDropped() != 1000 {
		t.Errorf("dropped %d; own lines written %d + dropped %d, want 1000", s.Dropped(), v.own, s.OwnDropped())
	}
}

// gateWriter blocks every Write until open is closed.
type gateWriter struct {
	w    io.Writer
	open chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	return g.w.Write(p)
}

// D10: a broken stdout (EPIPE) never blocks children: the sink drains and
// counts what it cannot write. Every line is either written or counted.
func TestBrokenWriterDrains(t *testing.T) {
	const n, size = 100_000, 100
	for _, okWrites := range []int{0, 3} {
		t.Run(fmt.Sprintf("fails after %d writes", okWrites), func(t *testing.T) {
			r := newReaper(t)
			v := newVerifier(size)
			w := &failingWriter{w: v, left: okWrites}
			s := NewSink(w, Options{})
			c := attachChild(t, r, s, "p", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"), nil, nil)
			if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
				t.Fatalf("exit %d", ex.Code())
			}
			s.Logger().Info("after the break")
			if err := s.Close(context.Background()); !errors.Is(err, syscall.EPIPE) {
				t.Fatalf("Close() = %v, want EPIPE", err)
			}
			if v.err != nil {
				t.Fatal(v.err)
			}
			if got := uint64(v.lines+v.own) + s.Dropped(); got != n+1 {
				t.Errorf("written %d + dropped %d = %d, want %d", v.lines+v.own, s.Dropped(), got, n+1)
			}
			if okWrites > 0 && v.lines == 0 {
				t.Error("nothing written before the break")
			}
		})
	}
}

// failingWriter passes left writes on, then fails with EPIPE forever, as a
// pipe to an exited `head` does.
type failingWriter struct {
	w    io.Writer
	left int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.left == 0 {
		return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
	}
	f.left--
	// Only whole lines: the verifier would otherwise see a torn last line.
	return f.w.Write(p)
}

// The real thing: a pipe whose reader is gone.
func TestClosedPipeWriter(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.Close()
	defer pw.Close()
	s := NewSink(pw, Options{})
	done := s.Attach("p", "stdout", strings.NewReader(strings.Repeat("line\n", 1000)), nil)
	<-done
	if err := s.Close(context.Background()); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Close() = %v, want EPIPE", err)
	}
	if s.Dropped() != 1000 {
		t.Fatalf("dropped %d, want 1000", s.Dropped())
	}
}

// syncBuffer is a bytes.Buffer safe to read while the sink writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// B12: once a child's output has been read (its streams hit EOF), a podvisor
// message logged afterwards (its exit) is written after all of that output,
// even while the output is still queued behind a stalled writer.
func TestOwnMessageFollowsQueuedOutput(t *testing.T) {
	// Little enough to fit in the queue even if every line arrives in a read
	// of its own (a loaded machine): 2 streams x 7 lines < queueLen batches.
	const n, size = 7, 100
	r := newReaper(t)
	var out syncBuffer
	w := &gateWriter{w: &out, open: make(chan struct{})}
	s := NewSink(w, Options{})
	c := attachChild(t, r, s, "p", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"), nil, nil)
	c.wait(t, 30*time.Second)
	s.Logger().Info("p exited")
	close(w.open)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != n+1 || lines[n] != "podvisor | level=INFO msg=\"p exited\"" {
		t.Fatalf("%d lines, last %q; want %d child lines, then the exit message", len(lines), lines[len(lines)-1], n)
	}
}

// D9: Close gives up when its context ends, even if the writer never returns.
func TestCloseIsBounded(t *testing.T) {
	w := &gateWriter{w: io.Discard, open: make(chan struct{})}
	defer close(w.open)
	s := NewSink(w, Options{})
	<-s.Attach("p", "stdout", strings.NewReader(strings.Repeat("x\n", 100)), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close() = %v, want DeadlineExceeded", err)
	}
}

// pipeBytes is how much is waiting in the pipe on a running child's fd.
func pipeBytes(t *testing.T, pid, fd int) int {
	t.Helper()
	return childPipe(t, pid, fd, unix.TIOCINQ) // FIONREAD
}

// pipeSize is the capacity of the pipe on a running child's fd.
func pipeSize(t *testing.T, pid, fd int) int {
	t.Helper()
	return childPipe(t, pid, fd, unix.F_GETPIPE_SZ)
}

// childPipe opens the pipe on a running child's fd anew through /proc (the
// write side: readers exist, so it does not block) and asks it req: an
// ioctl, or F_GETPIPE_SZ.
func childPipe(t *testing.T, pid, fd int, req uint) int {
	t.Helper()
	pfd, err := unix.Open(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd)
	var n int
	if req == unix.F_GETPIPE_SZ {
		n, err = unix.FcntlInt(uintptr(pfd), unix.F_GETPIPE_SZ, 0)
	} else {
		n, err = unix.IoctlGetInt(pfd, req)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}
