package proc

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// TestPidEnvIsTheChildsPid: PidEnv's variables are the child's own pid,
// replacing an inherited value, and only the shim's own variables are set
// (a name outside pidVars is dropped, not set to the pid).
func TestPidEnvIsTheChildsPid(t *testing.T) {
	r := newReaper(t)
	c, out := spawnOut(t, r, Spec{
		Argv:   []string{"/bin/sh", "-c", `echo "$$ $WATCHDOG_PID ${LISTEN_PID:-none} ${HOME:-nohome}"`},
		Env:    []string{"PATH=/usr/bin:/bin", "WATCHDOG_PID=1"},
		PidEnv: []string{"WATCHDOG_PID", "HOME"},
	})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	wait(t, c, 10*time.Second)
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != strconv.Itoa(c.Pid()) || f[1] != f[0] || f[2] != "none" || f[3] != "nohome" {
		t.Fatalf("child saw %q; want its pid %d twice, none, nohome", line, c.Pid())
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

// Between the bind and the chmod, whoever can write the socket's directory
// can put a symlink where the socket was; podvisor (root) must not change
// the mode or owner of what it points to (issue 34 review item 4: os.Chmod
// followed it).
func TestBindUnixChmodDoesNotFollowSwappedSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "app.sock")
	o := ListenOptions{Mode: 0o666, UID: -1, GID: -1}
	if os.Geteuid() == 0 {
		o.UID, o.GID = 65534, 65534
	}
	o.afterBind = func(path string) {
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(victim, path); err != nil {
			t.Error(err)
		}
	}
	f, err := Bind("unix", sock, o)
	if f != nil {
		f.Close()
	}
	if err == nil || !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("err %v; want an error naming %s that says it is not a socket", err, sock)
	}
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the symlink's target got mode %v, want 0600", fi.Mode().Perm())
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
		t.Errorf("the symlink's target got owner %d", st.Uid)
	}
}

// The mode and owner still reach the socket itself.
func TestBindUnixModeAndOwner(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "app.sock")
	o := ListenOptions{Mode: 0o640, UID: -1, GID: -1}
	uid := os.Geteuid()
	if uid == 0 {
		o.UID, o.GID, uid = 65534, 65534, 65534
	}
	f, err := Bind("unix", sock, o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o640 {
		t.Errorf("socket mode %v, want a socket with 0640", fi.Mode())
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
		t.Errorf("socket owner %d, want %d", st.Uid, uid)
	}
}
