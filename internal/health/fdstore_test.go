package health

import (
	"os"
	"syscall"
	"testing"
)

// sendWithFDs sends msg with fds to s from this process.
func sendWithFDs(t *testing.T, s *NotifySocket, msg string, fds ...int) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	if err := syscall.Sendmsg(fd, []byte(msg), oob, &syscall.SockaddrUnix{Name: s.Path()}, 0); err != nil {
		t.Fatal(err)
	}
}

func TestFDStoreMessages(t *testing.T) {
	s := newSocket(t)
	got, rejected := notifyEvents(t, s, os.Getpid())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	sendWithFDs(t, s, "FDSTORE=1\nFDNAME=conn", int(w.Fd()))
	n := waitNotification(t, got, rejected)
	if n.Store == nil || n.Store.Remove || n.Store.Name != "conn" || len(n.Store.Files) != 1 {
		t.Fatalf("got %+v", n)
	}
	// The stored fd is the pipe's write end: what goes in comes out of r.
	if _, err := n.Store.Files[0].Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	n.Store.Files[0].Close()
	buf := make([]byte, 1)
	if _, err := r.Read(buf); err != nil || buf[0] != 'x' {
		t.Fatalf("read %q %v", buf, err)
	}

	sendWithFDs(t, s, "FDSTORE=1", int(w.Fd()))
	if n := waitNotification(t, got, rejected); n.Store == nil || n.Store.Name != DefaultFDName {
		t.Fatalf("default name: %+v", n)
	} else {
		n.Store.Files[0].Close()
	}
	sendWithFDs(t, s, "FDSTOREREMOVE=1\nFDNAME=conn")
	if n := waitNotification(t, got, rejected); n.Store == nil || !n.Store.Remove || n.Store.Name != "conn" {
		t.Fatalf("remove: %+v", n)
	}
	// An fd sent without FDSTORE=1 is closed, the message still delivered.
	sendWithFDs(t, s, "READY=1", int(w.Fd()))
	if n := waitNotification(t, got, rejected); n != (Notification{Ready: true}) {
		t.Fatalf("ready: %+v", n)
	}
}
