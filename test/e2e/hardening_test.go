package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
	"golang.org/x/sys/unix"
)

// Black-box tests of the defects an outside review reproduced (issue
// "Hardening"; docs/reliability.md H1-H14). Each failed before its fix.

// onceThenRun is a service script that exits 1 on its first start (it leaves
// a marker file) and runs until signalled afterwards.
func onceThenRun(name string) string {
	return shq(fmt.Sprintf(`%s; echo up; if [ ! -e "$E2E_DIR/%s.once" ]; then touch "$E2E_DIR/%s.once"; sleep 0.3; %s; exit 1; fi; trap '%s; exit 143' TERM; while :; do sleep 0.05; done`,
		ev(name, "start"), name, name, ev(name, "fail"), ev(name, "term")))
}

// waitSettled waits until the shell script with pid runs its loop of short
// foreground sleeps (it has a child), so its TERM trap is in place.
func waitSettled(t *testing.T, pid int) {
	t.Helper()
	eventually(t, 5*time.Second, func() bool { return len(children(pid)) > 0 }, "script %d never forked its sleep", pid)
}

// upTrapper is trapper that prints "up" once its start is recorded, for a
// log readiness check: dependents then start after that record.
func upTrapper(name string) string {
	return shq(fmt.Sprintf(`trap '%s; sleep 0.2; %s; exit 143' TERM; %s; echo up; while :; do sleep 0.05; done`,
		ev(name, "term"), ev(name, "exit"), ev(name, "start")))
}

// H1: restart: true with condition started: the dependent stops, the
// dependency restarts after its backoff, then the dependent; /readyz 200.
func TestHardening_H1_RestartTrueStarted(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  a:
    command: `+onceThenRun("a")+`
    restart: {policy: always, backoff: 500ms}
  b:
    command: `+trapper("b")+`
    depends_on: {a: {condition: started, restart: true}}
`)
	// Both records: b is gated on a's exec, not on a's script having
	// written its record, so b's may come first.
	eventually(t, 10*time.Second, func() bool {
		evs := r.ReadEvents(t)
		return len(filterEvents(evs, "b", "start")) == 2 && len(filterEvents(evs, "a", "start")) >= 2
	}, "b never restarted")
	evs := r.ReadEvents(t)
	aStarts, bStarts := filterEvents(evs, "a", "start"), filterEvents(evs, "b", "start")
	if len(aStarts) != 2 {
		t.Fatalf("a started %d times, want 2: %v", len(aStarts), evs)
	}
	aFail, _ := findEvent(evs, "a", "fail")
	bTerm, ok := findEvent(evs, "b", "term")
	if !ok || bTerm.At.After(aStarts[1].At) {
		t.Errorf("want b stopped before a restarted; events %v", evs)
	}
	// The defect restarted b at once, while a sat in backoff (500ms).
	if bStarts[1].At.Sub(aFail.At) < 400*time.Millisecond {
		t.Errorf("b restarted %v after a failed, before a's backoff ended; events %v", bStarts[1].At.Sub(aFail.At), evs)
	}
	eventually(t, 5*time.Second, func() bool { code, _ := r.Get(t, "/readyz"); return code == 200 }, "/readyz never 200 again")
	waitSettled(t, bStarts[1].Pid())
	ffStopClean(t, r, 10*time.Second)
}

// H3: a <- b <- c, all restart: true: stop c, then b, restart a, then b, c.
func TestHardening_H3_RestartCascadeChain(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  a:
    command: `+onceThenRun("a")+`
    restart: {policy: always, backoff: 300ms}
    ready: {log: "^up$"}
  b:
    command: `+upTrapper("b")+`
    depends_on: {a: {condition: ready, restart: true}}
    ready: {log: "^up$"}
  c:
    command: `+upTrapper("c")+`
    depends_on: {b: {condition: ready, restart: true}}
`)
	eventually(t, 10*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "c", "start")) == 2 }, "c never restarted")
	evs := r.ReadEvents(t)
	cExit, _ := findEvent(evs, "c", "exit")
	bTerm, ok := findEvent(evs, "b", "term")
	if !ok || bTerm.At.Before(cExit.At) {
		t.Errorf("b stopped before c, its dependent, had exited; events %v", evs)
	}
	bStarts, cStarts, aStarts := filterEvents(evs, "b", "start"), filterEvents(evs, "c", "start"), filterEvents(evs, "a", "start")
	if len(aStarts) != 2 || len(bStarts) != 2 || !aStarts[1].At.Before(bStarts[1].At) || !bStarts[1].At.Before(cStarts[1].At) {
		t.Errorf("want a, then b, then c restarted; events %v", evs)
	}
	for _, starts := range [][]event{aStarts, bStarts, cStarts} {
		waitSettled(t, starts[len(starts)-1].Pid())
	}
	ffStopClean(t, r, 10*time.Second)
}

// sharedDir is a fresh directory every user can write, under a path every
// user can reach (t.TempDir's parent is 0700).
func sharedDir(t *testing.T) string {
	d, err := testharness.SharedTempDir(t, "podvisor-e2e-", 0o1777)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// H2: exec probes and stop.command run as the process's user, with its
// groups, environment and working directory. H11: a bare uid gets HOME=/.
func TestHardening_H2_ProbesAndHooksRunAsTheUser(t *testing.T) {
	ffRequireRoot(t)
	t.Parallel()
	d := sharedDir(t)
	id := `echo "$(id -u) $(id -g) $(pwd) $HOME $USER" > `
	r := startPodvisor(t, fmt.Sprintf(`
processes:
  named:
    command: ["sleep", "1000"]
    user: nobody
    working_dir: %[1]s
    ready: {exec: ["sh", "-c", '%[2]s%[1]s/probe-named'], start_interval: 50ms}
    stop: {command: ["sh", "-c", '%[2]s%[1]s/hook-named']}
  bare:
    command: ["sleep", "1000"]
    user: "12345"
    working_dir: %[1]s
    ready: {exec: ["sh", "-c", '%[2]s%[1]s/probe-bare'], start_interval: 50ms}
`, d, id))
	read := func(name string) string {
		var s string
		eventually(t, 10*time.Second, func() bool {
			b, err := os.ReadFile(filepath.Join(d, name))
			s = strings.TrimSpace(string(b))
			return err == nil && s != ""
		}, "%s never written", name)
		return s
	}
	if got, want := read("probe-named"), "65534 65534 "+d+" /nonexistent nobody"; got != want {
		t.Errorf("exec probe ran as %q, want %q", got, want)
	}
	if got, want := read("probe-bare"), "12345 12345 "+d+" / 12345"; got != want {
		t.Errorf("exec probe of a bare uid ran as %q, want %q", got, want)
	}
	r.Signal(syscall.SIGTERM)
	r.Wait(15 * time.Second)
	if got, want := read("hook-named"), "65534 65534 "+d+" /nonexistent nobody"; got != want {
		t.Errorf("stop.command ran as %q, want %q", got, want)
	}
}

// H4: a second SIGTERM cuts a running stop.command off at once.
func TestHardening_H4_SecondSignalCancelsHook(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
shutdown_timeout: 60s
processes:
  a:
    command: `+trapper("a")+`
    stop: {command: ["sh", "-c", "`+strings.ReplaceAll(ev("a", "hook"), `"`, `\"`)+`; sleep 20"], timeout: 30s}
`)
	r.WaitEvent(t, "a", "start", 5*time.Second)
	r.Signal(syscall.SIGTERM)
	r.WaitEvent(t, "a", "hook", 5*time.Second)
	r.Signal(syscall.SIGTERM)
	code, took := r.Wait(10 * time.Second)
	wantCode(t, r, code, 1)
	if took > eps() {
		t.Errorf("exited %v after the second SIGTERM, want at once (<= %v)", took, eps())
	}
	if pids := pidsWithArg("20"); len(zombies(pids)) > 0 {
		t.Errorf("hook processes left as zombies: %v", pids)
	}
}

// H5: the first SIGTERM during a teardown begun by job completion is not the
// "second" signal, and one TERM delivered twice at once counts once.
func TestHardening_H5_FirstSignalDuringJobTeardown(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  sidecar:
    command: `+shq(`trap '`+ev("sidecar", "term")+`; sleep 2; `+ev("sidecar", "flushed")+`; exit 0' TERM; `+ev("sidecar", "start")+`; sleep 1000 & echo up; wait`)+`
    ready: {log: "^up$"}
    stop: {timeout: 20s}
  work:
    type: job
    depends_on: {sidecar: ready}
    command: `+shq(ev("work", "done"))+`
`)
	r.WaitEvent(t, "sidecar", "term", 10*time.Second)
	// docker stop during the sidecar's graceful flush, delivered twice back
	// to back as coreutils timeout does (pid, then group).
	pid := r.Pid()
	_ = syscall.Kill(pid, syscall.SIGTERM)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	code, _ := r.Wait(15 * time.Second)
	wantCode(t, r, code, 0)
	if _, ok := findEvent(r.ReadEvents(t), "sidecar", "flushed"); !ok {
		t.Error("the sidecar was killed during its flush")
	}
}

// H6: a ready line printed by a process being stopped (missed
// start_timeout) neither marks it ready nor starts its dependent.
func TestHardening_H6_ReadinessWhileStoppingIgnored(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  a:
    command: `+shq(`trap 'echo READY; sleep 1; exit 0' TERM; `+ev("a", "start")+`; while :; do sleep 0.05; done`)+`
    ready: {log: READY}
    start_timeout: 500ms
    restart: {policy: always, backoff: 3s}
  b:
    command: `+shq(ev("b", "start")+"; exec sleep 1000")+`
    depends_on: [a]
`)
	r.WaitEvent(t, "a", "start", 5*time.Second)
	deadline := time.Now().Add(scaled(3 * time.Second))
	for time.Now().Before(deadline) {
		if code, body := r.Get(t, "/readyz"); code == 200 {
			t.Fatalf("/readyz 200 for a process that never became ready: %s", body)
		}
		time.Sleep(20 * time.Millisecond) // sampling /readyz, not synchronising
	}
	if _, ok := findEvent(r.ReadEvents(t), "b", "start"); ok {
		t.Error("b started against a dying dependency")
	}
	if !r.Stdout.Contains("READY") {
		t.Error("the TERM trap's READY line never came: the test did not exercise the defect")
	}
}

// H7: podvisor's own fd shortage is not charged to the process: its exec
// liveness check cannot run, the service keeps running, and the probe runs
// again once fds are back.
func TestHardening_H7_OwnEMFILENotChargedToChild(t *testing.T) {
	t.Parallel()
	d := sharedDir(t)
	r := startPodvisor(t, `
processes:
  svc:
    command: `+shq(ev("svc", "start")+"; exec sleep 1000")+`
    live: {exec: ["sh", "-c", "date +%s%N >> `+d+`/live"], interval: 100ms, failure_threshold: 1}
`)
	r.WaitEvent(t, "svc", "start", 5*time.Second)
	eventually(t, 5*time.Second, func() bool { _, err := os.Stat(filepath.Join(d, "live")); return err == nil }, "liveness probe never ran")
	pid := r.Pid()
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatalf("prlimit: %v", err)
	}
	// The limit is the lowest free fd number, not the count of open fds:
	// an fd podvisor closed while others it keeps were opened above it
	// (its start-up runs concurrently) leaves a free number below the
	// count, and the kernel hands out the lowest. A probe's own pipes,
	// open at the moment of the listing, hide a free number until they
	// close, so the limit is lowered again until podvisor is out of fds.
	eventually(t, 10*time.Second, func() bool {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		open := map[string]bool{}
		for _, f := range fds {
			open[f.Name()] = true
		}
		lowest := 0
		for open[strconv.Itoa(lowest)] {
			lowest++
		}
		var cur unix.Rlimit
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &cur); err != nil {
			t.Fatalf("prlimit: %v", err)
		}
		if uint64(lowest) < cur.Cur {
			if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: uint64(lowest), Max: old.Max}, nil); err != nil {
				t.Fatalf("prlimit: %v", err)
			}
		}
		return r.Stdout.Contains("cannot run probe")
	}, "podvisor never ran out of fds for its probe")
	time.Sleep(scaled(time.Second)) // the window in which a wrong podvisor would kill it
	if n := len(filterEvents(r.ReadEvents(t), "svc", "start")); n != 1 {
		t.Fatalf("svc started %d times while podvisor was out of fds, want 1\n%s", n, r.Stdout)
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
		t.Fatal(err)
	}
	r.Stdout.WaitFor(t, `probe runs again`, 40*time.Second)
	ffStopClean(t, r, 10*time.Second)
}

// H8: a hanging stop.command is cut off in time for the stop signal, so
// the process still exits by itself.
func TestHardening_H8_HangingHookStillSignals(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  a:
    command: `+trapper("a")+`
    stop: {command: ["sleep", "30"], timeout: 4s}
`)
	r.WaitEvent(t, "a", "start", 5*time.Second)
	r.Signal(syscall.SIGTERM)
	t0 := r.SignalledAt()
	code, took := r.Wait(15 * time.Second)
	wantCode(t, r, code, 0)
	term, ok := findEvent(r.ReadEvents(t), "a", "term")
	if !ok {
		t.Fatal("the stop signal never reached the process")
	}
	if at := term.At.Sub(t0); at < 2*time.Second || at > 4*time.Second {
		t.Errorf("TERM arrived %v after teardown began, want after the hook's share (3s) and before the stop timeout (4s)", at)
	}
	if took > 4*time.Second+eps() {
		t.Errorf("took %v", took)
	}
}

// H9: an open HTTP request does not stretch the exit past shutdown_timeout.
func TestHardening_H9_OpenRequestWithinBudget(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
shutdown_timeout: 1s
processes:
  a: {command: ["sleep", "1000"]}
`)
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /readyz HTTP/1.1\r\nHost: x\r\n")); err != nil { // headers never end
		t.Fatal(err)
	}
	r.Signal(syscall.SIGTERM)
	code, took := r.Wait(10 * time.Second)
	wantCode(t, r, code, 0)
	if took > time.Second+eps() {
		t.Errorf("exit took %v with an open request, want within shutdown_timeout 1s", took)
	}
}

// H10: no endpoint shows environment values, not even inside a probe's
// failure reason.
func TestHardening_H10_StatusRedactsEnvironment(t *testing.T) {
	t.Parallel()
	const secret = "tok-3f9a1c77e2b4"
	r := ffStartHTTP(t, `
processes:
  a:
    command: ["sleep", "1000"]
    env: {PATH: "/opt/`+secret+`/bin:/usr/bin:/bin", API_TOKEN: "`+secret+`"}
    ready: {exec: ["sh", "-c", "echo token is $$API_TOKEN; exit 1"], start_interval: 50ms}
  b:
    command: ["/bin/sleep", "1000"]
    env: {PATH: "/opt/`+secret+`/bin"}
    ready: {exec: ["no-such-probe-binary"], start_interval: 50ms}
`)
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		return strings.Contains(s.proc("a").Reason, "token is") && strings.Contains(s.proc("b").Reason, "not found")
	}, "probe failures not shown")
	if strings.Contains(st.Raw, secret) {
		t.Errorf("/status shows an environment value:\n%s", st.Raw)
	}
	if !strings.Contains(st.proc("a").Reason, "[redacted: API_TOKEN]") {
		t.Errorf("reason %q, want the value replaced by [redacted: API_TOKEN]", st.proc("a").Reason)
	}
}

// H12: a working_dir the user cannot reach is named, with the directory
// that stops them.
func TestHardening_H12_UnreachableWorkingDirNamed(t *testing.T) {
	ffRequireRoot(t)
	t.Parallel()
	d := sharedDir(t)
	locked := filepath.Join(d, "locked")
	if err := os.MkdirAll(filepath.Join(locked, "srv"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := startPodvisor(t, `
processes:
  a:
    command: ["true"]
    user: nobody
    working_dir: `+filepath.Join(locked, "srv")+`
`)
	code, _ := r.Wait(10 * time.Second)
	wantCode(t, r, code, 1)
	want := `no search permission on \"` + locked + `\"`
	if !r.Stdout.Contains(want) && !r.Stdout.Contains(strings.ReplaceAll(want, `\"`, `"`)) {
		t.Errorf("output does not name %s:\n%s", locked, r.Stdout)
	}
	if r.Stdout.Contains("exec: permission denied") {
		t.Errorf("misleading exec error:\n%s", r.Stdout)
	}
}

// H13 and the process cap, through `podvisor check`.
func TestHardening_H13_CheckLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok := ffWrite(t, dir, "backoff.yaml", []byte("processes:\n  a: {command: [a], restart: {backoff: 1m}}\n"), 0o644)
	if res := ffRunCLI(t, dir, 10*time.Second, "check", "-c", ok); res.Code != 0 {
		t.Errorf("backoff: 1m refused: %d %s", res.Code, res.Stderr)
	}
	var b strings.Builder
	b.WriteString("processes:\n")
	for i := range 10001 {
		b.WriteString("  p" + strconv.Itoa(i) + ": {command: [x]}\n")
	}
	many := ffWrite(t, dir, "many.yaml", []byte(b.String()), 0o644)
	res := ffRunCLI(t, dir, 10*time.Second, "check", "-c", many)
	if res.Code != 2 || !strings.Contains(res.Stderr, "10001 processes defined; the limit is 10000") {
		t.Errorf("check of 10001 processes: %d %q", res.Code, res.Stderr)
	}
}
