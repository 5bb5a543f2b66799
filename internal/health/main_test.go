package health

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// helperEnv selects a helper role when the test binary is re-executed as a
// child process (the os/exec helperCommand pattern).
const helperEnv = "PODVISOR_HEALTH_HELPER"

// reaper is the test binary's single waiter for children, as in podvisor:
// exec probes run through it, and helpers are spawned with it. Nothing in
// these tests may call exec.Cmd.Wait, which would race its wait4(-1).
var reaper *proc.Reaper

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	reaper = proc.NewReaper(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		reaper.Run(ctx)
	}()
	code := m.Run()
	cancel()
	<-done
	if grpcServer.path != "" {
		os.RemoveAll(filepath.Dir(grpcServer.path))
	}
	os.Exit(code)
}

// runHelper is the child side. Each role ends by blocking until the test
// kills its process group. Roles:
//
//	notify        send READY=1 and STATUS=up to $NOTIFY_SOCKET
//	notify-child  start a "notify" helper as a child
//	idle          nothing
//	grpc-health   a gRPC health server (grpc_test.go)
func runHelper(role string) int {
	switch role {
	case "idle":
	case "notify":
		conn, err := net.Dial("unixgram", os.Getenv("NOTIFY_SOCKET"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := conn.Write([]byte("READY=1\nSTATUS=up\n")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "notify-child":
		// No reaper in the helper: it may wait for its own child.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=notify")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown helper role %q\n", role)
		return 2
	}
	select {}
}

// spawn starts s through the test reaper and kills its process group when the
// test ends.
func spawn(t *testing.T, s proc.Spec) *proc.Child {
	t.Helper()
	if s.Stderr == nil {
		s.Stderr = os.Stderr
	}
	c, err := proc.Spawn(reaper, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Signal(syscall.SIGKILL)
		<-c.Done()
	})
	return c
}

// startHelper spawns the test binary in role with extra environment.
func startHelper(t *testing.T, role string, env ...string) *proc.Child {
	t.Helper()
	// Without atexit_sleep_ms=0 a race-enabled helper lingers 1s at exit.
	env = append(append(os.Environ(), helperEnv+"="+role, "GORACE=atexit_sleep_ms=0"), env...)
	return spawn(t, proc.Spec{Argv: []string{os.Args[0]}, Env: env})
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not true within %s: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gone reports whether pid no longer runs (absent from /proc or a zombie).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}

// attempt runs one Check with a timeout and reports how long it took.
func attempt(c Checker, timeout time.Duration) (Result, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	r := c.Check(ctx)
	return r, time.Since(start)
}
