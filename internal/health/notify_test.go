package health

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"

	"github.com/podvisor/podvisor/internal/proc"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notifyEvents runs s for pid and returns channels of deliveries and
// rejections.
func notifyEvents(t *testing.T, s *NotifySocket, pid int) (<-chan Notification, <-chan string) {
	t.Helper()
	got := make(chan Notification, 16)
	rejected := make(chan string, 16)
	done := make(chan error, 1)
	go func() { done <- s.Run(pid, func(n Notification) { got <- n }, func(r string) { rejected <- r }) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return got, rejected
}

func newSocket(t *testing.T) *NotifySocket {
	t.Helper()
	s, err := NewNotifySocket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func waitNotification(t *testing.T, got <-chan Notification, rejected <-chan string) Notification {
	t.Helper()
	select {
	case n := <-got:
		return n
	case r := <-rejected:
		t.Fatalf("rejected: %s", r)
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	return Notification{}
}

func waitRejection(t *testing.T, got <-chan Notification, rejected <-chan string) string {
	t.Helper()
	select {
	case n := <-got:
		t.Fatalf("accepted %+v", n)
	case r := <-rejected:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no rejection")
	}
	return ""
}

func TestNotifySocketFromChild(t *testing.T) {
	s := newSocket(t)
	cmd := startHelper(t, "notify", "NOTIFY_SOCKET="+s.Path())
	got, rejected := notifyEvents(t, s, cmd.Pid())
	if n := waitNotification(t, got, rejected); n != (Notification{Ready: true, Status: "up"}) {
		t.Errorf("got %+v, want READY with status up", n)
	}
}

func TestNotifySocketFromGrandchild(t *testing.T) {
	s := newSocket(t)
	cmd := startHelper(t, "notify-child", "NOTIFY_SOCKET="+s.Path())
	got, rejected := notifyEvents(t, s, cmd.Pid())
	if n := waitNotification(t, got, rejected); !n.Ready {
		t.Errorf("got %+v, want READY", n)
	}
}

// A sibling of the supervised process (not its descendant) is rejected, and
// so is the supervisor's own process.
func TestNotifySocketRejectsStrangers(t *testing.T) {
	s := newSocket(t)
	main := startHelper(t, "idle") // the supervised process
	got, rejected := notifyEvents(t, s, main.Pid())
	startHelper(t, "notify", "NOTIFY_SOCKET="+s.Path())
	if r := waitRejection(t, got, rejected); !strings.Contains(r, "not process") {
		t.Errorf("rejection reason %q", r)
	}
	send(t, s.Path(), "READY=1")
	if r := waitRejection(t, got, rejected); !strings.Contains(r, "not process") {
		t.Errorf("rejection reason %q", r)
	}
}

func TestNotifySocketMessages(t *testing.T) {
	s := newSocket(t)
	got, rejected := notifyEvents(t, s, os.Getpid()) // this process is the "supervised" one
	send(t, s.Path(), "STATUS=loading")
	if n := waitNotification(t, got, rejected); n != (Notification{Status: "loading"}) {
		t.Errorf("got %+v, want status only", n)
	}
	send(t, s.Path(), "garbage without equals")
	if r := waitRejection(t, got, rejected); !strings.Contains(r, "malformed") {
		t.Errorf("rejection reason %q", r)
	}
	send(t, s.Path(), strings.Repeat("X", maxNotifyDatagram+1))
	if r := waitRejection(t, got, rejected); !strings.Contains(r, "larger than") {
		t.Errorf("rejection reason %q", r)
	}
	send(t, s.Path(), "MAINPID=1\nBARRIER=1") // well-formed, nothing for us: ignored
	send(t, s.Path(), "WATCHDOG=1")
	if n := waitNotification(t, got, rejected); n != (Notification{Watchdog: true}) {
		t.Errorf("got %+v, want WATCHDOG=1", n)
	}
	send(t, s.Path(), "WATCHDOG=trigger\nSTATUS=hung")
	if n := waitNotification(t, got, rejected); n != (Notification{WatchdogTrigger: true, Status: "hung"}) {
		t.Errorf("got %+v, want WATCHDOG=trigger", n)
	}
	send(t, s.Path(), "READY=1")
	if n := waitNotification(t, got, rejected); n != (Notification{Ready: true}) {
		t.Errorf("got %+v, want READY", n)
	}
}

// Passed fds are closed at once: systemd-notify's BARRIER=1 waits for that.
func TestNotifySocketClosesPassedFDs(t *testing.T) {
	s := newSocket(t)
	got, rejected := notifyEvents(t, s, os.Getpid())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// net refuses WriteMsgUnix on a connected datagram socket: use a raw one.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	err = syscall.Sendmsg(fd, []byte("BARRIER=1"), syscall.UnixRights(int(w.Fd())), &syscall.SockaddrUnix{Name: s.Path()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read on the barrier pipe: %v, want EOF (the passed fd closed)", err)
	}
	select {
	case n := <-got:
		t.Errorf("BARRIER=1 delivered as %+v", n)
	case r := <-rejected:
		t.Errorf("BARRIER=1 rejected: %s", r)
	default:
	}
}

func TestNotifySocketSystemdNotify(t *testing.T) {
	bin, err := exec.LookPath("systemd-notify")
	if err != nil {
		t.Skip("systemd-notify not installed")
	}
	s := newSocket(t)
	// The shell is the supervised process and systemd-notify its child. By
	// default systemd-notify sends the credentials of its parent (the shell)
	// when privileged, and its own otherwise: both are accepted. (--pid=N
	// adds MAINPID=N, which is ignored.)
	cmd := spawn(t, proc.Spec{
		Argv: []string{"sh", "-c", bin + ` --ready --status=serving && exec sleep 1000`},
		Env:  append(os.Environ(), "NOTIFY_SOCKET="+s.Path()),
	})
	got, rejected := notifyEvents(t, s, cmd.Pid())
	var n Notification
	for !n.Ready { // READY and STATUS may come in one message or two
		m := waitNotification(t, got, rejected)
		n.Ready = n.Ready || m.Ready
	}
}

func TestNotifySocketLifecycle(t *testing.T) {
	dir := t.TempDir()
	s, err := NewNotifySocket(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode().Type() != os.ModeSocket || filepath.Dir(s.Path()) != dir {
		t.Fatalf("socket %s: %v %v", s.Path(), fi, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file left after Close: %v", err)
	}
	if err := s.Run(1, func(Notification) {}, nil); err != nil {
		t.Errorf("Run after Close: %v, want nil", err)
	}
}

func TestNotifySocketRefusesUnsafeDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if s, err := NewNotifySocket(dir); err == nil {
		s.Close()
		t.Error("accepted a world-writable directory")
	}
	if _, err := NewNotifySocket(filepath.Join(dir, "missing")); err == nil {
		t.Error("accepted a missing directory")
	}
}

func send(t *testing.T, path, msg string) {
	t.Helper()
	conn, err := net.Dial("unixgram", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func TestParseNotify(t *testing.T) {
	tests := []struct {
		in     string
		ready  bool
		status string
		ok     bool
	}{
		{"READY=1", true, "", true},
		{"READY=1\n", true, "", true},
		{"STATUS=warming up\nREADY=1\n", true, "warming up", true},
		{"READY=0", false, "", true},
		{"READY=10", false, "", true},
		{"STATUS=a\nSTATUS=b", false, "b", true},
		{"STATUS=", false, "", true},
		{"MAINPID=4\nX_CUSTOM=1", false, "", true},
		{"STATUS=a=b", false, "a=b", true},
		{"", false, "", false},
		{"\n\n", false, "", false},
		{"READY", false, "", false},
		{"=1", false, "", false},
		{"READY=1\x00", false, "", false},
		{"STATUS=\xff", false, "", false},
	}
	for _, tt := range tests {
		ready, status, ok := ParseNotify([]byte(tt.in))
		if ready != tt.ready || status != tt.status || ok != tt.ok {
			t.Errorf("ParseNotify(%q) = %v, %q, %v; want %v, %q, %v", tt.in, ready, status, ok, tt.ready, tt.status, tt.ok)
		}
	}
}

func TestWaitNotifyFDFromChild(t *testing.T) {
	tests := []struct {
		name, script string
		want         error
	}{
		{"newline", `printf 'ok\n' >&3; exec sleep 1000`, nil},
		{"newline from a grandchild after the child exits", `sh -c 'echo >&3' & exit 0`, nil},
		{"EOF without newline", `printf 'almost' >&3`, ErrNotifyClosed},
		{"exits without writing", `exit 0`, ErrNotifyClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := NewNotifyPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			spawn(t, proc.Spec{Argv: []string{"sh", "-c", tt.script}, NotifyFD: 3, NotifyFile: w})
			w.Close() // our copy: otherwise EOF never comes
			if err := WaitNotifyFD(r); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("WaitNotifyFD = %v, want %v", err, tt.want)
			}
		})
	}
}

// Closing the read end is how the supervisor gives up on a process that
// never becomes ready.
func TestWaitNotifyFDClosed(t *testing.T) {
	r, w, err := NewNotifyPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- WaitNotifyFD(r) }()
	if _, err := w.Write([]byte("no newline yet")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("WaitNotifyFD = %v, want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitNotifyFD still blocked after Close")
	}
}

// endless is a reader of n chunks of data without a newline, then a newline.
type endless struct{ chunks int }

func (e *endless) Read(p []byte) (int, error) {
	if e.chunks == 0 {
		p[0] = '\n'
		return 1, nil
	}
	e.chunks--
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A stream without a newline costs constant memory, however long it is.
func TestWaitNotifyFDBoundedMemory(t *testing.T) {
	var err error
	allocs := testing.AllocsPerRun(1, func() {
		err = WaitNotifyFD(&endless{chunks: 20000}) // 10 MB in 512-byte reads
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs > 2 {
		t.Errorf("%v allocations for a 10 MB stream, want a constant buffer", allocs)
	}
}

func TestParseNotifyMessage(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Notification
	}{
		{"WATCHDOG=1", Notification{Watchdog: true}},
		{"WATCHDOG=trigger", Notification{WatchdogTrigger: true}},
		{"WATCHDOG=0", Notification{}},
		{"EXTEND_TIMEOUT_USEC=5000000", Notification{ExtendUsec: 5000000}},
		{"EXTEND_TIMEOUT_USEC=-1", Notification{}},
		{"ERRNO=2\nSTATUS=failed", Notification{Errno: 2, Status: "failed"}},
		{"ERRNO=0", Notification{}},
		{"ERRNO=x", Notification{}},
		{"STOPPING=1", Notification{Stopping: true}},
		{"STOPPING=0", Notification{}},
		{"RELOADING=1\nMONOTONIC_USEC=123456", Notification{Reloading: true, MonotonicUsec: 123456}},
		{"RELOADING=yes\nMONOTONIC_USEC=-5", Notification{}},
		{"MAINPID=4242", Notification{MainPID: 4242}},
		{"MAINPID=1", Notification{}},
		{"MAINPID=0", Notification{}},
		{"MAINPID=-7", Notification{}},
		{"MAINPID=4194305", Notification{}},
		{"MAINPID=12ab", Notification{}},
	} {
		if got, ok := ParseNotifyMessage([]byte(tt.in)); !ok || got != tt.want {
			t.Errorf("ParseNotifyMessage(%q) = %+v, %v; want %+v", tt.in, got, ok, tt.want)
		}
	}
}
