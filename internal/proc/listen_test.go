package proc

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestListenFilesReachTheChild: the sockets are fds 3 and 4, blocking, and
// LISTEN_PID is the child's own pid although it is set after the fork.
func TestListenFilesReachTheChild(t *testing.T) {
	tcp, err := Bind("tcp", "127.0.0.1:0", ListenOptions{Backlog: 16, UID: -1, GID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "s.sock")
	ux, err := Bind("unix", sock, ListenOptions{Mode: 0o600, UID: -1, GID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file: %v %v, want mode 0600", fi, err)
	}
	r := newReaper(t)
	c, out := spawnOut(t, r, Spec{
		Argv:        []string{"/bin/sh", "-c", `echo "$$ $LISTEN_PID $LISTEN_FDS $LISTEN_FDNAMES $(readlink /proc/self/fd/3 | cut -c1-7) $(cat /proc/$$/fdinfo/4 | grep flags)"`},
		Env:         []string{"PATH=/usr/bin:/bin", "LISTEN_FDS=2", "LISTEN_FDNAMES=a:b", "LISTEN_PID=1"},
		ListenFiles: []*os.File{tcp, ux},
	})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	wait(t, c, 10*time.Second)
	f := strings.Fields(line)
	if len(f) < 7 || f[0] != strconv.Itoa(c.Pid()) || f[1] != f[0] || f[2] != "2" || f[3] != "a:b" || f[4] != "socket:" {
		t.Fatalf("child saw %q; want its pid %d twice, 2, a:b, socket:", line, c.Pid())
	}
	if flags, _ := strconv.ParseUint(f[6], 8, 32); flags&unix.O_NONBLOCK != 0 {
		t.Fatalf("fd 4 is non-blocking (flags %s)", f[6])
	}
}

// TestBindInUseNamesTheHolder: a port in use is named with its holder.
func TestBindInUseNamesTheHolder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Bind("tcp", ln.Addr().String(), ListenOptions{UID: -1, GID: -1})
	if !errors.Is(err, unix.EADDRINUSE) || !strings.Contains(err.Error(), "by pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("err %v; want address in use by pid %d", err, os.Getpid())
	}
}

func TestBindUnixRefusesALiveSocketAndNonSocket(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.sock")
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := Bind("unix", live, ListenOptions{UID: -1, GID: -1}); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("live socket: %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := Bind("unix", file, ListenOptions{UID: -1, GID: -1}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("regular file: %v", err)
	}
	if _, err := Bind("unix", "/proc/podvisor-test.sock", ListenOptions{UID: -1, GID: -1}); err == nil || !strings.Contains(err.Error(), "cannot create a socket in directory /proc") {
		t.Fatalf("unwritable dir: %v", err)
	}
}
