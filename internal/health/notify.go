package health

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
)

// Notification is one accepted sd_notify message.
type Notification struct {
	Ready  bool   // the message had READY=1
	Status string // STATUS=..., "" if absent
	// Watchdog is WATCHDOG=1 (alive: the deadline starts again);
	// WatchdogTrigger is WATCHDOG=trigger (the process asks to be treated
	// as hung).
	Watchdog, WatchdogTrigger bool
	// ExtendUsec is EXTEND_TIMEOUT_USEC=: the start or stop deadline in
	// force moves to at least this far from now (0: absent).
	ExtendUsec uint64
	// Errno is ERRNO=: the error the process reports it failed with (0:
	// absent).
	Errno int
	// Store is set for FDSTORE=1 or FDSTOREREMOVE=1 (internal/launch/fdstore.go).
	Store *StoreRequest
	// Stopping is STOPPING=1: the process has begun stopping on its own.
	Stopping bool
	// Reloading is RELOADING=1: the process is reloading until its next
	// READY=1; MonotonicUsec is MONOTONIC_USEC=, the CLOCK_MONOTONIC time
	// it sent the message at (0: absent), which Type=notify-reload
	// requires with RELOADING=1.
	Reloading     bool
	MonotonicUsec uint64
	// MainPID is MAINPID=: the pid the process names as its main one
	// (a forking parent's daemon; 0: absent or not a valid pid). Who may
	// be named is decided by the receiver (internal/launch/mainpid.go).
	MainPID int
}

const (
	// maxNotifyDatagram bounds an sd_notify message; longer ones are rejected.
	maxNotifyDatagram = 4 << 10
	// maxSocketPath is the room in sockaddr_un.sun_path, less the NUL.
	maxSocketPath = 107
	// maxAncestry bounds the /proc parent walk that checks a sender.
	maxAncestry = 64
	// maxPid is the kernel's largest pid (PID_MAX_LIMIT on 64-bit).
	maxPid = 1 << 22
	// notifyChunk is the fd:N read size, s6's: a stream without a newline
	// never costs more memory than this.
	notifyChunk = 512
)

// NotifySocket is a systemd-style NOTIFY_SOCKET for one start of one process:
// a unixgram socket that accepts `READY=1` and `STATUS=...` datagrams from
// that process or any of its descendants (`systemd-notify --ready` run from a
// service's shell is a child of it) and rejects every other sender.
//
// Lifecycle: NewNotifySocket before the spawn (the child gets NOTIFY_SOCKET=
// Path()), Run after it with the child's pid (the kernel queues datagrams
// that arrive earlier), Close when the process has exited.
//
// A descendant is recognised by walking /proc parent links while it still
// exists: a helper that sends and exits at once, and is reaped before the
// datagram is read, cannot be verified and is rejected. systemd-notify waits
// for its message to be processed (the BARRIER=1 handshake, completed here by
// closing the fd it sends), so it is not affected.
type NotifySocket struct {
	conn *net.UnixConn
	path string
	// also is a second root whose tree may send: the main pid the process
	// named (MAINPID=, a pid file), once its leader may be gone (0: none).
	also atomic.Int64
}

// AllowSender lets pid and its descendants send too, in place of any pid
// allowed before (the process's main pid: internal/launch/mainpid.go).
func (s *NotifySocket) AllowSender(pid int) { s.also.Store(int64(pid)) }

// NewNotifySocket creates a socket with a unique name in dir. dir must be
// owned by podvisor's user and not writable by group or others, so nobody can
// swap the socket for their own; the pid check, not file permissions, decides
// who may send (a child running as another user must be able to write to it).
func NewNotifySocket(dir string) (*NotifySocket, error) {
	if err := checkPrivateDir(dir); err != nil {
		return nil, err
	}
	var conn *net.UnixConn
	var path string
	for range 10 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		path = filepath.Join(dir, "notify-"+hex.EncodeToString(b[:])+".sock")
		if len(path) > maxSocketPath {
			return nil, fmt.Errorf("notify socket path %s: longer than %d bytes", path, maxSocketPath)
		}
		var err error
		conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("notify socket: %w", err)
		}
	}
	if conn == nil {
		return nil, fmt.Errorf("notify socket in %s: no free name", dir)
	}
	s := &NotifySocket{conn: conn, path: path}
	if err := s.setup(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *NotifySocket) setup() error {
	if err := os.Chmod(s.path, 0o666); err != nil {
		return fmt.Errorf("notify socket: %w", err)
	}
	raw, err := s.conn.SyscallConn()
	if err != nil {
		return fmt.Errorf("notify socket: %w", err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1)
	}); err != nil {
		return fmt.Errorf("notify socket: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("notify socket: set SO_PASSCRED: %w", serr)
	}
	return nil
}

func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("notify socket dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("notify socket dir %s: not a directory", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("notify socket dir %s: writable by group or others (mode %s)", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("notify socket dir %s: owned by uid %d, not %d", dir, st.Uid, os.Geteuid())
	}
	return nil
}

// Path is the socket's path, the value for NOTIFY_SOCKET.
func (s *NotifySocket) Path() string { return s.path }

// Run reads messages until Close, passing each well-formed message from pid
// or a descendant of pid to deliver, and the reason for every other datagram
// to reject (which may be nil). Both run on Run's goroutine. Run returns nil
// after Close, or the error that stopped it reading.
func (s *NotifySocket) Run(pid int, deliver func(Notification), reject func(reason string)) error {
	if reject == nil {
		reject = func(string) {}
	}
	buf := make([]byte, maxNotifyDatagram)
	// Room for the credentials and for a few passed fds (systemd-notify sends
	// one for its barrier); fds beyond that are closed by the kernel.
	oob := make([]byte, syscall.CmsgSpace(syscall.SizeofUcred)+syscall.CmsgSpace(16*4))
	for {
		n, oobn, flags, _, err := s.conn.ReadMsgUnix(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("notify socket: %w", err)
		}
		// Closing passed fds releases a waiting systemd-notify (BARRIER=1);
		// only an accepted FDSTORE=1 message keeps them.
		cred, fds := takeControl(oob[:oobn])
		keep := false
		switch {
		case flags&syscall.MSG_TRUNC != 0:
			reject(fmt.Sprintf("datagram larger than %d bytes", maxNotifyDatagram))
		case cred == nil:
			reject("datagram without sender credentials")
		case !IsDescendant(int(cred.Pid), pid) && !IsDescendant(int(cred.Pid), int(s.also.Load())):
			reject(fmt.Sprintf("sender pid %d is not process %d or one of its descendants", cred.Pid, pid))
		default:
			m, ok := ParseNotifyMessage(buf[:n])
			if !ok {
				reject(fmt.Sprintf("malformed message from pid %d", cred.Pid))
				break // out of the switch: its fds are closed below
			}
			store := parseStore(buf[:n], fds)
			keep = store != nil && !store.Remove
			m.Store = store
			if m != (Notification{}) {
				deliver(m)
			}
		}
		if !keep {
			for _, fd := range fds {
				syscall.Close(fd)
			}
		}
	}
}

// Close stops Run and removes the socket file.
func (s *NotifySocket) Close() error {
	err := s.conn.Close()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// takeControl returns the sender credentials in oob and the fds passed
// along with them, which the caller must close or keep.
func takeControl(oob []byte) (*syscall.Ucred, []int) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, nil
	}
	var passed []int
	var cred *syscall.Ucred
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Level != syscall.SOL_SOCKET {
			continue
		}
		switch m.Header.Type {
		case syscall.SCM_CREDENTIALS:
			if c, err := syscall.ParseUnixCredentials(m); err == nil {
				cred = c
			}
		case syscall.SCM_RIGHTS:
			fds, _ := syscall.ParseUnixRights(m)
			for _, fd := range fds {
				syscall.CloseOnExec(fd) // only a spawn passes them on
			}
			passed = append(passed, fds...)
		}
	}
	return cred, passed
}

// IsDescendant reports whether pid is root or a descendant of root, following
// parent links in /proc (at most maxAncestry of them).
func IsDescendant(pid, root int) bool {
	if root <= 0 {
		return false
	}
	for range maxAncestry {
		if pid == root {
			return true
		}
		if pid <= 1 {
			return false
		}
		ppid, err := parentPid(pid)
		if err != nil {
			return false
		}
		pid = ppid
	}
	return false
}

// parentPid reads the ppid field of /proc/<pid>/stat. The command name before
// it is in parentheses and may itself contain spaces and parentheses, so the
// fields are counted from the last ')'.
func parentPid(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp ...
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return strconv.Atoi(string(f[1]))
}

// ParseNotify parses one sd_notify datagram: newline-separated KEY=VALUE
// assignments. ready is true when a line is exactly READY=1; status is the
// last STATUS= value; other keys are ignored. ok is false for a message that
// is empty, not UTF-8, contains NUL, or has a line that is not KEY=VALUE.
func ParseNotify(b []byte) (ready bool, status string, ok bool) {
	m, ok := ParseNotifyMessage(b)
	return m.Ready, m.Status, ok
}

// ParseNotifyMessage is ParseNotify with every key podvisor acts on:
// READY=1, STATUS=, WATCHDOG=1 and WATCHDOG=trigger, EXTEND_TIMEOUT_USEC=,
// ERRNO=, STOPPING=1, RELOADING=1, MONOTONIC_USEC= and MAINPID=. A value
// that does not parse leaves its field unset; the message still counts.
func ParseNotifyMessage(b []byte) (m Notification, ok bool) {
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return Notification{}, false
	}
	seen := false
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		k, v, found := bytes.Cut(line, []byte("="))
		if !found || len(k) == 0 {
			return Notification{}, false
		}
		seen = true
		switch string(k) {
		case "READY":
			if string(v) == "1" {
				m.Ready = true
			}
		case "STATUS":
			m.Status = string(v)
		case "EXTEND_TIMEOUT_USEC":
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				m.ExtendUsec = n
			}
		case "ERRNO":
			if n, err := strconv.Atoi(string(v)); err == nil && n > 0 && n < 4096 {
				m.Errno = n
			}
		case "STOPPING":
			m.Stopping = m.Stopping || string(v) == "1"
		case "RELOADING":
			m.Reloading = m.Reloading || string(v) == "1"
		case "MONOTONIC_USEC":
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				m.MonotonicUsec = n
			}
		case "MAINPID":
			// A pid is positive and below the kernel's limit (2^22);
			// 1 is init, never a process's main pid.
			if n, err := strconv.Atoi(string(v)); err == nil && n > 1 && n <= maxPid {
				m.MainPID = n
			}
		case "WATCHDOG":
			switch string(v) {
			case "1":
				m.Watchdog = true
			case "trigger":
				m.WatchdogTrigger = true
			}
		}
	}
	if !seen {
		return Notification{}, false
	}
	return m, true
}

// ErrNotifyClosed is returned by WaitNotifyFD when the process closed its
// notify fd without writing a newline: under s6 semantics it never became
// ready.
var ErrNotifyClosed = errors.New("notify fd closed without readiness")

// NewNotifyPipe returns a pipe for `notify: fd:N`. Both ends are close-on-
// exec; the spawner places w at fd N in the child (which clears the flag for
// that copy only) and must close its own w right after the spawn: otherwise
// the read end never sees EOF when the process dies. The read end goes to
// WaitNotifyFD and is closed by the caller once that returns.
func NewNotifyPipe() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("notify pipe: %w", err)
	}
	return r, w, nil
}

// WaitNotifyFD reads r in 512-byte chunks until the first newline and
// returns nil: the process is ready (s6 semantics; what precedes the newline
// is ignored). It returns ErrNotifyClosed at EOF without a newline, and the
// read error otherwise (closing an *os.File r makes a blocked read fail with
// os.ErrClosed, which is how a caller gives up). Memory use is constant
// however much the process writes.
func WaitNotifyFD(r io.Reader) error {
	var buf [notifyChunk]byte
	for {
		n, err := r.Read(buf[:])
		if bytes.IndexByte(buf[:n], '\n') >= 0 {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return ErrNotifyClosed
		}
		if err != nil {
			return fmt.Errorf("notify fd: %w", err)
		}
	}
}
