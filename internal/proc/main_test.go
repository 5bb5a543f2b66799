package proc

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
	"golang.org/x/sys/unix"
)

// procHelper marks argv[1] of this package's own helper modes, which need
// package proc and so cannot live in testproc.
const procHelper = "proc-helper"

func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == procHelper {
		if err := runProcHelper(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintf(os.Stderr, "proc-helper %s: %v\n", os.Args[2], err)
			testproc.Exit(100)
		}
		testproc.Exit(0)
	}
	testproc.Main()
	// Orphans of the tests' children (daemons, zombie factories) come to the
	// test binary, so tests can check they are reaped and swept.
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "warning:", err)
	}
	os.Exit(m.Run())
}

func helperArgv(mode string, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return append([]string{exe, procHelper, mode}, args...)
}

func runProcHelper(mode string, args []string) error {
	switch mode {
	case "dirty":
		return dirtyExec(args)
	case "mini":
		return miniSupervisor(len(args) > 0 && args[0] == "sanitize")
	case "sigpipe":
		return writeUntilEPIPE(len(args) > 0 && args[0] == "sanitize")
	case "pdeath":
		return deathSignalParent()
	case "leave-group":
		// Join the parent's process group (same session), leaving ours empty.
		if err := syscall.Setpgid(0, syscall.Getpgrp()); err != nil {
			return err
		}
		pg, err := syscall.Getpgid(os.Getppid())
		if err != nil {
			return err
		}
		if err := syscall.Setpgid(0, pg); err != nil {
			return err
		}
		fmt.Printf("ready pid=%d\n", os.Getpid())
		select {}
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// dirtyExec stands in for a careless parent (nohup, a shell's background job):
// it ignores SIGHUP, SIGINT and SIGPIPE, blocks SIGTERM, SIGUSR1 and SIGPIPE on
// this thread, and execs the given helper mode, which inherits all of that.
func dirtyExec(args []string) error {
	runtime.LockOSThread() // the mask set below is this thread's
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	var set unix.Sigset_t
	for _, s := range []syscall.Signal{syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGPIPE} {
		set.Val[(s-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		return err
	}
	argv := helperArgv(args[0], args[1:]...)
	return syscall.Exec(argv[0], argv, os.Environ())
}

// miniSupervisor spawns `sleep` through a Reaper (optionally after Sanitize)
// and, for comparison, through plain os/exec; prints "pids OURS PLAIN" and
// blocks. Both children have a death signal, so killing this process cleans up.
func miniSupervisor(sanitize bool) error {
	if sanitize {
		if _, err := Sanitize(); err != nil {
			return err
		}
	}
	r := NewReaper(nil)
	go r.Run(context.Background())
	c, err := Spawn(r, Spec{Argv: []string{"sleep", "1000"}, DeathSignal: syscall.SIGKILL})
	if err != nil {
		return err
	}
	plain := exec.Command("sleep", "1000")
	plain.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	plainPid, err := r.onStartPlain(plain)
	if err != nil {
		return err
	}
	fmt.Printf("pids %d %d\n", c.Pid(), plainPid)
	select {}
}

// onStartPlain starts cmd the way any Go program would, on an ordinary thread,
// registered with r so that Run reaps it without complaint.
func (r *Reaper) onStartPlain(cmd *exec.Cmd) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	r.children[pid] = &entry{exit: make(chan Exit, 1)}
	return pid, nil
}

// writeUntilEPIPE writes to stdout, which the test makes a pipe whose read end
// is closed, and exits 0 when a write fails with EPIPE. Without Sanitize Go
// kills the process with SIGPIPE instead (exit 141).
func writeUntilEPIPE(sanitize bool) error {
	if sanitize {
		if _, err := Sanitize(); err != nil {
			return err
		}
	}
	for {
		if _, err := os.Stdout.Write([]byte("x\n")); err != nil {
			if strings.Contains(err.Error(), "broken pipe") {
				return nil
			}
			return err
		}
	}
}

// deathSignalParent spawns `sleep` with DeathSignal SIGKILL from a goroutine
// whose OS thread then exits, prints "child pid=N" and blocks. The child must
// survive that thread's exit and die only with this process.
func deathSignalParent() error {
	r := NewReaper(nil)
	go r.Run(context.Background())
	type result struct {
		c   *Child
		err error
	}
	res := make(chan result)
	go func() {
		// Exiting while locked terminates this thread. Had the fork happened
		// here, the kernel would now send the child its death signal.
		runtime.LockOSThread()
		c, err := Spawn(r, Spec{Argv: []string{"sleep", "1000"}, DeathSignal: syscall.SIGKILL})
		res <- result{c, err}
	}()
	got := <-res
	if got.err != nil {
		return got.err
	}
	fmt.Printf("child pid=%d\n", got.c.Pid())
	select {}
}

// newReaper returns a Reaper whose Run goroutine stops when the test ends.
func newReaper(t *testing.T) *Reaper {
	t.Helper()
	return runReaper(t, NewReaper(slog.New(slog.NewTextHandler(testWriter{t}, nil))))
}

// runReaper runs r until the test ends.
func runReaper(t *testing.T, r *Reaper) *Reaper {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// spawn spawns s and makes sure its group is killed when the test ends.
func spawn(t *testing.T, r *Reaper, s Spec) *Child {
	t.Helper()
	c, err := Spawn(r, s)
	if err != nil {
		t.Fatalf("spawn %q: %v", s.Argv, err)
	}
	t.Cleanup(func() { _ = c.Signal(syscall.SIGKILL) })
	return c
}

// spawnOut spawns s with stdout on a pipe and returns a reader for it.
func spawnOut(t *testing.T, r *Reaper, s Spec) (*Child, *bufio.Reader) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	s.Stdout = pw
	c := spawn(t, r, s)
	pw.Close()
	return c, bufio.NewReader(pr)
}

// wait returns the child's Exit or fails the test after timeout.
func wait(t *testing.T, c *Child, timeout time.Duration) Exit {
	t.Helper()
	select {
	case ex := <-c.Done():
		return ex
	case <-time.After(timeout * testproc.Slowdown()):
		t.Fatalf("pid %d did not exit within %v", c.Pid(), timeout)
		return Exit{}
	}
}

// gone reports whether pid no longer exists or is a zombie.
func gone(pid int) bool {
	st, err := readStat(pid)
	return err != nil || st.zombie()
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
