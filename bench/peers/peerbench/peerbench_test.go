package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// uniqueSleep is a sleep argument no other test or process uses.
func uniqueSleep(t *testing.T, n int) string {
	t.Helper()
	return strconv.Itoa(77000000 + os.Getpid()%10000*100 + n)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startSleep(t *testing.T, name, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, arg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestReadStatParsesAfterTheLastParenthesis(t *testing.T) {
	// A command name with ") S 1 (" in it must not shift the fields.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	odd := filepath.Join(t.TempDir(), "x) S 1 (")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cmd := startSleep(t, odd, uniqueSleep(t, 1))
	p, err := readStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if p.ppid != os.Getpid() {
		t.Errorf("ppid = %d, want %d", p.ppid, os.Getpid())
	}
	// Any state a live process can be in: a fresh exec may still be in
	// disk sleep (D) loading its pages on a busy machine (seen in CI). A
	// parser that split at the first ')' reads ' ' or a digit here.
	if !strings.ContainsRune("RSD", rune(p.state)) {
		t.Errorf("state = %q, want R, S or D", p.state)
	}
}

func TestMarkerCountsOnlyLiveExactMatches(t *testing.T) {
	arg := uniqueSleep(t, 2)
	m := newMarker("sleep " + arg)
	a := startSleep(t, "sleep", arg)
	startSleep(t, "sleep", arg)
	startSleep(t, "sleep", arg+"0") // a longer argument is not a match
	if n, err := m.count(); err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
	// Killed but not yet reaped: a zombie no longer counts.
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "killed sleep uncounted", func() bool {
		n, err := m.count()
		return err == nil && n == 1
	})
}

func TestTreeFindsGrandchildren(t *testing.T) {
	arg := uniqueSleep(t, 3)
	cmd := exec.Command("/bin/sh", "-c", "sleep "+arg+" & sleep "+arg+" & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	m := newMarker("sleep " + arg)
	eventually(t, 5*time.Second, "two sleeps", func() bool {
		n, err := m.count()
		return err == nil && n == 2
	})
	tr, err := tree(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, p := range tr {
		if m.is(p.pid) {
			marked++
		}
	}
	if len(tr) != 3 || tr[0].pid != cmd.Process.Pid || marked != 2 {
		t.Errorf("tree = %v (%d marked), want the shell and its two sleeps", tr, marked)
	}
	if _, err := tree(1 << 30); err == nil {
		t.Error("tree of a missing pid: no error")
	}
}

func rusageNanos(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func TestCPUAndMemoryOfSelf(t *testing.T) {
	// Spin until the kernel's rusage says 30 ms of CPU went by; schedstat,
	// summed over all threads, must see about as much.
	before, err := cpuNanos(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ru0 := rusageNanos(t)
	deadline := time.Now().Add(10 * time.Second)
	for rusageNanos(t)-ru0 < int64(30*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no 30 ms of CPU within 10 s")
		}
	}
	after, err := cpuNanos(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(after - before); d < 15*time.Millisecond {
		t.Errorf("30 ms of spinning counted as %v", d)
	}
	rss, pss, err := memKiB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || pss <= 0 || pss > rss {
		t.Errorf("rss %d KiB, pss %d KiB: want 0 < pss <= rss", rss, pss)
	}
}

func TestTailHas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	buf := make([]byte, 16)
	want := []byte("END\n")
	if found, err := tailHas(path, buf, want); err != nil || found {
		t.Fatalf("missing file: %v, %v; want false, nil", found, err)
	}
	cases := []struct {
		content string
		found   bool
	}{
		{"a\nb\nEND\n", true},
		{"END\n" + strings.Repeat("x", 16), false}, // before the last 16 bytes
		{"a\nEND", false},                          // line not finished yet
	}
	for _, c := range cases {
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if found, err := tailHas(path, buf, want); err != nil || found != c.found {
			t.Errorf("%q: %v, %v; want %v", c.content, found, err, c.found)
		}
	}
}

func TestReadSpecs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec")
	body := "# comment\npv\tsleep 1\texec podvisor run\n\ns6\tsleep 2\texec s6-svscan dir\twith tab\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readSpecs(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []spec{{"pv", "sleep 1", "exec podvisor run"}, {"s6", "sleep 2", "exec s6-svscan dir\twith tab"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := os.WriteFile(path, []byte("pv sleep 1 podvisor\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSpecs(path); err == nil {
		t.Error("line without tabs: no error")
	}
}

// remaining waits up to 2 s for the marked processes to be gone (a SIGKILLed
// process lingers in /proc for a moment) and returns how many are left.
func remaining(m marker) int {
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, _ := m.count()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A shell standing in for a supervisor: three workload sleeps, and on
// SIGTERM it stops them and exits.
func fakeSupervisor(arg string) []string {
	return []string{"/bin/sh", "-c", `trap 'kill $pids; exit 0' TERM
for i in 1 2 3; do sleep ` + arg + ` & pids="$pids $!"; done
wait; wait`}
}

func TestLifecycleStartsMeasuresAndTearsDown(t *testing.T) {
	arg := uniqueSleep(t, 4)
	var out, errOut bytes.Buffer
	args := append([]string{"-n", "3", "-marker", "sleep " + arg, "-settle", "10ms", "-timeout", "10s", "--"}, fakeSupervisor(arg)...)
	if err := lifecycle(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("lifecycle: %v (%s)", err, errOut.String())
	}
	got := fields(t, out.String())
	if got["procs"] != 1 || got["pss_kib"] <= 0 || got["startup_ms"] <= 0 || got["teardown_ms"] <= 0 {
		t.Errorf("figures %v: want one supervisor process and positive times and memory", got)
	}
	if n := remaining(newMarker("sleep " + arg)); n != 0 {
		t.Errorf("%d workload processes left after teardown", n)
	}
}

func TestLifecycleFailsWhenTheWorkloadNeverRuns(t *testing.T) {
	arg := uniqueSleep(t, 5)
	var out, errOut bytes.Buffer
	// Two sleeps where four are awaited: a timeout, and no survivors.
	args := []string{"-n", "4", "-marker", "sleep " + arg, "-timeout", "300ms", "--",
		"/bin/sh", "-c", "sleep " + arg + " & sleep " + arg + " & wait"}
	if err := lifecycle(context.Background(), args, &out, &errOut); err == nil {
		t.Fatalf("no error; output %q", out.String())
	}
	if n := remaining(newMarker("sleep " + arg)); n != 0 {
		t.Errorf("%d workload processes left after a failed run", n)
	}
}

func TestChainComputesHopsFromEvents(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	script := `printf '100.000000 start c1\n100.001000 ready c1\n100.004000 start c2\n100.005000 ready c2\n100.010000 start c3\n' >> "$0"; exec sleep ` + uniqueSleep(t, 6)
	var out, errOut bytes.Buffer
	args := []string{"-n", "3", "-events", events, "-timeout", "10s", "--", "/bin/sh", "-c", script, events}
	if err := chain(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("chain: %v (%s)", err, errOut.String())
	}
	// Hops: c1 ready -> c2 start 3 ms, c2 ready -> c3 start 5 ms.
	want := "hop_ms=4.000 max_hop_ms=5.000 total_ms=9.000\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestReadEventsSkipsPartialLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events")
	if err := os.WriteFile(path, []byte("1.5 start a\n1.6 ready a\n1.7 sta"), 0o644); err != nil {
		t.Fatal(err)
	}
	starts, readies, err := readEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != 1 || starts["a"] != 1.5 || readies["a"] != 1.6 {
		t.Errorf("starts %v readies %v", starts, readies)
	}
}

func fields(t *testing.T, line string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("bad field %q in %q", f, line)
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("bad value in %q: %v", f, err)
		}
		out[k] = n
	}
	return out
}
