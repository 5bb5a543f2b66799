package proc

import (
	"context"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/podvisor/podvisor/internal/testproc"
	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses must not shift the fields.
	line := "42 (a b) (c)) S 7 42 40 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 123456 1000 10 18446744073709551615"
	st, err := parseStat(42, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := stat{pid: 42, state: 'S', ppid: 7, pgrp: 42, session: 40, flags: 4194560, start: 123456}
	if st != want {
		t.Fatalf("got %+v, want %+v", st, want)
	}
	if _, err := parseStat(1, []byte("1 (x) S 0")); err == nil {
		t.Fatal("short line accepted")
	}
}

func TestDescendants(t *testing.T) {
	r := newReaper(t)
	c, out := spawnOut(t, r, Spec{Argv: []string{"sh", "-c", "sleep 1000 & sh -c 'sleep 1000 & echo $!; wait' & wait"}})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	grandgrandchild := mustAtoi(t, line)
	var d []int
	testproc.Eventually(t, 5*time.Second, "four descendants", func() bool {
		d = Descendants(os.Getpid())
		return len(d) >= 4
	})
	for _, pid := range []int{c.Pid(), grandgrandchild} {
		if !slices.Contains(d, pid) {
			t.Errorf("Descendants = %v, missing %d", d, pid)
		}
	}
	if !slices.IsSorted(d) {
		t.Errorf("Descendants = %v, not sorted", d)
	}
	if sub := Descendants(grandgrandchild); len(sub) != 0 {
		t.Errorf("Descendants(%d) = %v, want none", grandgrandchild, sub)
	}
}

// B5/B7: daemons (new session, parent exited, reparented to the subreaper)
// escape group kills; the final sweep finds and ends them: with SIGTERM
// within grace, and with SIGKILL after grace if they ignore SIGTERM.
func TestKillDescendantsSweepsDaemons(t *testing.T) {
	r := newReaper(t)
	daemons := startDaemons(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	sw := KillDescendants(ctx, 300*time.Millisecond, nil)
	took := time.Since(start)
	// At least: other tests' children may still be on their way out.
	if sw.Terminated < 2 || sw.Killed < 1 || sw.Remaining != 0 {
		t.Errorf("sweep %+v, want 2 terminated, 1 killed, 0 remaining", sw)
	}
	if took < 300*time.Millisecond {
		t.Errorf("sweep took %v: SIGKILL came before the grace period ended", took)
	}
	for _, d := range daemons {
		if !gone(d) {
			t.Errorf("daemon %d survived the sweep", d)
		}
	}
	if left := Descendants(os.Getpid()); len(alive(statsOf(left))) != 0 {
		t.Errorf("descendants left: %v", left)
	}
}

// Every descendant gets a SIGTERM before any SIGKILL, however short the
// grace and however long the first walk of /proc takes (a loaded machine
// once made the sweep kill both daemons without a SIGTERM).
func TestKillDescendantsTermsFirst(t *testing.T) {
	r := newReaper(t)
	daemons := startDaemons(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sw := KillDescendants(ctx, time.Nanosecond, nil)
	if sw.Terminated < 2 || sw.Remaining != 0 {
		t.Errorf("sweep %+v, want both daemons sent SIGTERM first, 0 remaining", sw)
	}
	for _, d := range daemons {
		if !gone(d) {
			t.Errorf("daemon %d survived the sweep", d)
		}
	}
}

// startDaemons starts two daemonized grandchildren, one of which ignores
// SIGTERM, and waits until both are reparented to the test process.
func startDaemons(t *testing.T, r *Reaper) []int {
	t.Helper()
	var daemons []int
	for _, args := range [][]string{{}, {"ignore-term"}} {
		c, out := spawnOut(t, r, Spec{Argv: testproc.Argv("daemonize", args...)})
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "daemon pid=")
		if !ok {
			t.Fatalf("helper said %q", line)
		}
		daemons = append(daemons, mustAtoi(t, v))
		if ex := wait(t, c, 5*time.Second); ex.Code() != 0 {
			t.Fatalf("daemonize exited %d", ex.Code())
		}
	}
	for _, d := range daemons {
		testproc.Eventually(t, 5*time.Second, "daemon reparented to us", func() bool {
			st, err := readStat(d)
			return err == nil && st.ppid == os.Getpid() && st.session == d
		})
	}
	return daemons
}

func statsOf(pids []int) []stat {
	var out []stat
	for _, p := range pids {
		if st, err := readStat(p); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// A stale (pid, start time) must not be signalled: the pid may name another
// process by now.
func TestSignalProcChecksIdentity(t *testing.T) {
	r := newReaper(t)
	c := spawn(t, r, Spec{Argv: []string{"sleep", "1000"}})
	st, err := readStat(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	stale := st
	stale.start--
	signalProc(stale, syscall.SIGKILL)
	signalProc(st, syscall.SIGTERM)
	// Had the stale SIGKILL been sent, it would have been generated first.
	if ex := wait(t, c, 5*time.Second); ex.Code() != 143 {
		t.Fatalf("code %d, want 143 (SIGTERM only)", ex.Code())
	}
}

func TestBecomeSubreaper(t *testing.T) {
	if os.Getpid() == 1 {
		t.Skip("a no-op as PID 1")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	var v int32
	if _, _, e := unix.Syscall(unix.SYS_PRCTL, unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0); e != 0 {
		t.Fatal(e)
	}
	if v != 1 {
		t.Fatalf("PR_GET_CHILD_SUBREAPER = %d", v)
	}
}

// The sweep's shortcut agrees with the /proc walk: no children at all
// means no descendants (as a subreaper), and a live child means a walk.
func TestNoDescendantsShortcut(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Skip(err)
	}
	r := newReaper(t)
	c, err := Spawn(r, Spec{Argv: testproc.Argv("sleep", "30s")})
	if err != nil {
		t.Fatal(err)
	}
	if noDescendants() {
		t.Fatal("noDescendants with a child running")
	}
	if err := c.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait(t, c, 5*time.Second)
	// Other tests' children may linger: the shortcut must then say "walk".
	testproc.Eventually(t, 5*time.Second, "shortcut agrees with the walk", func() bool {
		return noDescendants() == (len(Descendants(os.Getpid())) == 0)
	})
}
