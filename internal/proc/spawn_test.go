package proc

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
)

func TestChildLeadsItsOwnProcessGroup(t *testing.T) {
	r := newReaper(t)
	c := spawn(t, r, Spec{Argv: []string{"sleep", "1000"}})
	st, err := readStat(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if st.pgrp != c.Pid() || c.Pgid() != c.Pid() {
		t.Fatalf("pgrp %d, Pgid() %d, want both %d", st.pgrp, c.Pgid(), c.Pid())
	}
	self, _ := readStat(os.Getpid())
	if st.session != self.session {
		t.Fatalf("child in session %d, want ours (%d): Setpgid, not Setsid", st.session, self.session)
	}
}

func TestSpawnErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		spec Spec
		code int
		want string // substring of the message
	}{
		{"not in PATH", Spec{Argv: []string{"podvisor-no-such-command"}}, 127, "not found in PATH"},
		{"child PATH used", Spec{Argv: []string{"true"}, Env: []string{"PATH=" + dir}}, 127, "not found in PATH (1 directory searched)"},
		{"missing file", Spec{Argv: []string{filepath.Join(dir, "nope")}}, 127, "no such file"},
		{"relative to Dir", Spec{Argv: []string{"./nope"}, Dir: dir}, 127, "no such file"},
		{"not executable", Spec{Argv: []string{write("data.txt", "hello\n", 0o644)}}, 126, "permission denied"},
		{"directory", Spec{Argv: []string{dir}}, 126, "is a directory"},
		{"missing interpreter", Spec{Argv: []string{write("script.sh", "#!/nonexistent/interp -x\necho hi\n", 0o755)}}, 127,
			`interpreter "/nonexistent/interp" named on the script's #! line does not exist`},
		{"exec format", Spec{Argv: []string{write("garbage.bin", "\x00\x01\x02\x03garbage", 0o755)}}, 126, "exec format error"},
		{"empty argv", Spec{Argv: []string{""}}, 126, "empty command"},
		{"bad dir", Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "missing")}, 127, "working directory"},
		{"dir is a file", Spec{Argv: []string{"true"}, Dir: write("f", "", 0o644)}, 126, "is not a directory"},
		{"notify fd 2", Spec{Argv: []string{"true"}, NotifyFD: 2, NotifyFile: os.Stdin}, 126, "notify fd 2"},
	}
	if loader := brokenLoaderBinary(t, dir); loader != "" {
		tests = append(tests, struct {
			name string
			spec Spec
			code int
			want string
		}{"missing ELF loader", Spec{Argv: []string{loader}}, 127, "dynamic loader"})
	}
	r := newReaper(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Spawn(r, tt.spec)
			if err == nil {
				_ = c.Signal(syscall.SIGKILL)
				t.Fatal("spawned")
			}
			var se *SpawnError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want *SpawnError", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("message %q does not contain %q", err, tt.want)
			}
			if se.Code() != tt.code {
				t.Errorf("Code() = %d, want %d (%v)", se.Code(), tt.code, err)
			}
			if se.Retryable() {
				t.Errorf("Retryable() = true for %v", err)
			}
		})
	}
}

// brokenLoaderBinary copies /bin/true with its PT_INTERP path renamed to
// something missing; exec then fails with ENOENT although the file exists.
func brokenLoaderBinary(t *testing.T, dir string) string {
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		return ""
	}
	f, err := os.Open("/bin/true")
	if err != nil {
		return ""
	}
	interp := elfInterpreter(f)
	f.Close()
	if interp == "" {
		return ""
	}
	fake := strings.Replace(interp, "ld", "xx", 1)
	b = bytes.Replace(b, []byte(interp+"\x00"), []byte(fake+"\x00"), 1)
	p := filepath.Join(dir, "broken-loader")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSpawnFindsCommandInChildPath(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "podvisor-test-cmd")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newReaper(t)
	c := spawn(t, r, Spec{Argv: []string{"podvisor-test-cmd"}, Env: []string{"PATH=/nonexistent:" + dir}})
	if ex := wait(t, c, 5*time.Second); ex.Code() != 5 {
		t.Fatalf("code %d, want 5", ex.Code())
	}
}

// Children get fds 0, 1, 2 and the notify fd only, even while podvisor holds
// a listening socket, pipes and files (B20); stdin is /dev/null.
func TestChildInheritsOnlyItsFds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	keep, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	pipes := make([]*os.File, 0, 6)
	for range 3 {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		pipes = append(pipes, pr, pw)
	}
	out, errw, notify := pipes[1], pipes[3], pipes[5]
	// An fd without close-on-exec, as a careless parent of podvisor leaves.
	leaked, err := syscall.Dup(int(keep.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leaked)

	r := newReaper(t)
	// The shell stops itself before opening anything, so what /proc shows
	// then is exactly what it inherited (a sleep would be caught opening
	// its locale files).
	stopped := []string{"sh", "-c", "kill -STOP $$"}
	for _, fd := range []int{3, 7} {
		c := spawnStopped(t, r, Spec{Argv: stopped, Stdout: out, Stderr: errw, NotifyFD: fd, NotifyFile: notify})
		got := childFds(t, c.Pid())
		want := map[int]string{
			0:  "/dev/null",
			1:  fdTarget(t, out),
			2:  fdTarget(t, errw),
			fd: fdTarget(t, notify),
		}
		if len(got) != len(want) {
			t.Errorf("notify fd %d: child fds %v, want %v", fd, got, want)
		}
		for n, target := range want {
			if got[n] != target {
				t.Errorf("notify fd %d: child fd %d -> %q, want %q", fd, n, got[n], target)
			}
		}
		_ = c.Signal(syscall.SIGKILL)
		wait(t, c, 5*time.Second)
	}

	c := spawnStopped(t, r, Spec{Argv: stopped}) // nil stdout/stderr: /dev/null
	got := childFds(t, c.Pid())
	if len(got) != 3 || got[0] != "/dev/null" || got[1] != "/dev/null" || got[2] != "/dev/null" {
		t.Errorf("child fds %v, want 0-2 on /dev/null", got)
	}
}

// spawnStopped spawns s and waits until it is stopped (state T).
func spawnStopped(t *testing.T, r *Reaper, s Spec) *Child {
	t.Helper()
	c := spawn(t, r, s)
	testproc.Eventually(t, 5*time.Second, "child stopped itself", func() bool {
		st, err := readStat(c.Pid())
		return err == nil && st.state == 'T'
	})
	return c
}

func childFds(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fds := make(map[int]string)
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		fds[n], _ = os.Readlink(dir + "/" + e.Name())
	}
	return fds
}

func fdTarget(t *testing.T, f *os.File) string {
	t.Helper()
	l, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestCredentials(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	r := newReaper(t)
	for _, tt := range []struct {
		cred   Cred
		groups string
	}{
		{Cred{UID: 65534, GID: 65534, Groups: []uint32{65533, 100}}, "100 65533"},
		{Cred{UID: 12345, GID: 23456}, ""}, // unknown numeric ids are fine; groups cleared
	} {
		c := spawn(t, r, Spec{Argv: []string{"sleep", "1000"}, Cred: &tt.cred})
		st := statusFields(t, c.Pid())
		uid := strconv.Itoa(int(tt.cred.UID))
		gid := strconv.Itoa(int(tt.cred.GID))
		checks := map[string]string{
			"Uid":    strings.Repeat(uid+"\t", 3) + uid,
			"Gid":    strings.Repeat(gid+"\t", 3) + gid,
			"Groups": tt.groups,
			"CapEff": "0000000000000000",
			"CapPrm": "0000000000000000",
		}
		for k, want := range checks {
			if st[k] != want {
				t.Errorf("cred %+v: %s = %q, want %q", tt.cred, k, st[k], want)
			}
		}
		_ = c.Signal(syscall.SIGKILL)
	}
}

func TestCredentialsNeedRoot(t *testing.T) {
	_, err := credential(Cred{UID: 0, GID: 0}, 1000)
	if err == nil || !strings.Contains(err.Error(), "requires podvisor to run as root") {
		t.Fatalf("non-root switch to root: err %v", err)
	}
	_, err = credential(Cred{UID: 33, GID: 33}, 1000)
	if err == nil {
		t.Fatal("non-root switch to another user accepted")
	}
	c, err := credential(Cred{UID: 1000, GID: uint32(os.Getegid())}, 1000)
	if err != nil || c != nil {
		t.Fatalf("switch to the current ids: cred %v err %v, want no switch", c, err)
	}
	if os.Geteuid() == 0 {
		if c, err := credential(Cred{UID: 5, GID: 6}, 0); err != nil || c.Uid != 5 || c.Gid != 6 || c.NoSetGroups {
			t.Fatalf("root: cred %+v err %v", c, err)
		}
	}
}

func statusFields(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string)
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

func TestSignalReachesTheWholeGroup(t *testing.T) {
	r := newReaper(t)
	// The leader and a background member, both in the child's group.
	c, out := spawnOut(t, r, Spec{Argv: []string{"sh", "-c", "sleep 1000 & echo $!; wait"}})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	member := mustAtoi(t, line)
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := wait(t, c, 5*time.Second); ex.Code() != 143 {
		t.Fatalf("leader code %d, want 143", ex.Code())
	}
	testproc.Eventually(t, 5*time.Second, "member killed by the group signal", func() bool { return gone(member) })
}

// B4: the leader exits on SIGTERM but a member ignores it. The group stays
// alive after the leader is reaped and can still be killed through the pgid;
// once empty, signalling reports os.ErrProcessDone.
func TestGroupOutlivesLeader(t *testing.T) {
	r := newReaper(t)
	c, out := spawnOut(t, r, Spec{Argv: []string{"sh", "-c",
		`trap '' TERM; sleep 1000 & trap - TERM; echo $!; wait`}})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	member := mustAtoi(t, line)
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wait(t, c, 5*time.Second)
	if !c.GroupAlive() || gone(member) {
		t.Fatal("the TERM-ignoring member should have survived")
	}
	if err := c.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("signal after leader reaped: %v", err)
	}
	testproc.Eventually(t, 5*time.Second, "group empty", func() bool { return !c.GroupAlive() })
	if err := c.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal to an empty group: %v, want os.ErrProcessDone", err)
	}
}

// B17: a stopped process acts on the stop signal at once because Stop follows
// it with SIGCONT.
func TestStopContinuesAStoppedProcess(t *testing.T) {
	r := newReaper(t)
	c, out := spawnOut(t, r, Spec{Argv: testproc.Argv("signals")})
	if _, err := testproc.ReadyPid(out); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 5*time.Second, "child stopped", func() bool {
		st, err := readStat(c.Pid())
		return err == nil && st.state == 'T'
	})
	if err := c.Stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := wait(t, c, 5*time.Second); ex.Code() != 0 {
		t.Fatalf("code %d, want 0 (the helper exits 0 on TERM)", ex.Code())
	}
	if line, _ := out.ReadString('\n'); line != "signal TERM\n" {
		t.Fatalf("helper printed %q", line)
	}
}

// A leader that moved to another process group is still signalled directly.
func TestSignalFollowsLeaderThatLeftItsGroup(t *testing.T) {
	if os.Getpid() == 1 {
		t.Skip("as PID 1 of a new namespace our own group is outside it, so the helper cannot join it")
	}
	r := newReaper(t)
	c, out := spawnOut(t, r, Spec{Argv: helperArgv("leave-group")})
	if _, err := testproc.ReadyPid(out); err != nil {
		t.Fatal(err)
	}
	if st, err := readStat(c.Pid()); err != nil || st.pgrp == c.Pid() {
		t.Fatalf("leader still in its group (%+v, %v)", st, err)
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := wait(t, c, 5*time.Second); ex.Code() != 143 {
		t.Fatalf("code %d, want 143", ex.Code())
	}
}

// D5: a child spawned with DeathSignal dies with podvisor, even though the
// goroutine that called Spawn ran on a thread that has since exited.
func TestDeathSignal(t *testing.T) {
	r := newReaper(t)
	parent, out := spawnOut(t, r, Spec{Argv: helperArgv("pdeath")})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "child pid=")
	if !ok {
		t.Fatalf("helper said %q", line)
	}
	child := mustAtoi(t, v)
	if gone(child) {
		t.Fatal("child died before its parent")
	}
	if err := parent.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait(t, parent, 5*time.Second)
	testproc.Eventually(t, time.Second, "grandchild killed by its death signal", func() bool { return gone(child) })
}
