package e2e

// Black-box tests of the sd_notify watchdog against the real binary: a
// Python daemon that pings and then hangs, and systemd-notify from a shell.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wdLatencies reads the child's record of how late each SIGTERM came after
// its watchdog deadline.
func wdLatencies(t testing.TB, dir string) (usec int, late []time.Duration) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(readFile(filepath.Join(dir, "watchdog.txt"))), "\n") {
		if line == "" {
			continue
		}
		var u, l int
		if _, err := fmt.Sscanf(line, "usec=%d late_us=%d", &u, &l); err != nil {
			t.Fatalf("watchdog.txt: %q: %v", line, err)
		}
		usec = u
		late = append(late, time.Duration(l)*time.Microsecond)
	}
	return usec, late
}

// TestWatchdog_MissedPingRestarts: the child gets WATCHDOG_USEC, pings three
// times and hangs; one interval after its last ping it gets SIGTERM (the
// latency is logged), /status says why, the metric counts it, and the
// restart pings again. Its STATUS= shows in /status.
//
// The interval counts from the spawn, so a start slower than 1 s (a busy
// machine) is itself a missed ping: the run is killed before its handler
// records anything, and podvisor is right to do so. The test therefore waits
// for two kills the child recorded, however many restarts that takes, and
// runs Debian's python3 without a version manager's shim (-S: no site
// packages) to keep the start short.
func TestWatchdog_MissedPingRestarts(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  daemon:
    command: [`+obPython(t)+`, "-S", `+hhTestdata(t, "watchdog_child.py")+`, "3"]
    ready: {notify: systemd}
    watchdog: 1s
    restart: {policy: always, backoff: 100ms}
`)
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
		return s.proc("daemon").Status == "pinging" || s.proc("daemon").Status == "hung"
	}, "STATUS= not in /status")
	var usec int
	var late []time.Duration
	eventually(t, 30*time.Second, func() bool {
		if !strings.HasSuffix(readFile(filepath.Join(r.Dir, "watchdog.txt")), "\n") {
			return false // none yet, or a line being written
		}
		usec, late = wdLatencies(t, r.Dir)
		return len(late) >= 2
	}, "the child recorded %s watchdog SIGTERMs, want 2", ffLazy(func() string { return fmt.Sprint(len(late)) }))
	if usec != 1000000 {
		t.Fatalf("WATCHDOG_USEC=%d, want 1000000", usec)
	}
	// The second kill is counted as a restart when the next run is spawned.
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool { return s.proc("daemon").Restarts >= 2 }, "not restarted twice by its watchdog")
	for _, l := range late {
		if l < -5*time.Millisecond || l > eps() {
			t.Errorf("SIGTERM came %v after the watchdog deadline, want within [0, %v]", l, eps())
		}
	}
	t.Logf("deadline to SIGTERM at the child: %v", late)
	if v, ok := ffMetric(t, r, `podvisor_process_watchdog_failures_total{process="daemon"}`); !ok || v < 2 {
		t.Errorf("watchdog_failures_total = %v (present %v)", v, ok)
	}
	if !strings.Contains(r.Stdout.String()+r.Stderr.String(), "no WATCHDOG=1 within 1s") {
		t.Errorf("the log does not give the watchdog's reason")
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestWatchdog_SystemdNotify: Debian's systemd-notify works outside systemd
// against podvisor's socket, for READY=1 and WATCHDOG=1 alike; a shell
// service that pings with it stays up, and WATCHDOG=trigger restarts it.
func TestWatchdog_SystemdNotify(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		t.Skip("systemd-notify not installed (Debian package systemd, in TEST_DEBS)")
	}
	r := ffStartHTTP(t, `
processes:
  sh:
    command: `+ffq(ev("sh", "usec=$${WATCHDOG_USEC}")+`; systemd-notify --ready --status=up; `+
		`if [ -e "$E2E_DIR/triggered" ]; then while :; do systemd-notify WATCHDOG=1; sleep 0.2; done; fi; `+
		`for i in 1 2 3 4 5 6 7 8; do systemd-notify WATCHDOG=1; sleep 0.2; done; `+
		`touch "$E2E_DIR/triggered"; systemd-notify WATCHDOG=trigger; exec sleep 600`)+`
    ready: {notify: systemd}
    watchdog: 1s
    restart: {policy: always, backoff: 100ms}
`)
	st := ffWaitStatus(t, r, 15*time.Second, func(s ffStatus) bool {
		return s.proc("sh").Restarts == 1 && s.proc("sh").State == "running"
	}, "not restarted once by WATCHDOG=trigger")
	starts := filterEvents(r.ReadEvents(t), "sh", "usec=1000000")
	if len(starts) != 2 {
		t.Errorf("%d starts with WATCHDOG_USEC=1000000, want 2: %v", len(starts), r.ReadEvents(t))
	}
	// 8 pings over 1.6 s kept the first one up past its 1 s interval.
	if d := starts[1].At.Sub(starts[0].At); d < 1600*time.Millisecond {
		t.Errorf("restarted %v after the start, before its pings ran out", d)
	}
	if st.proc("sh").Status != "up" {
		t.Errorf("status %q, want up", st.proc("sh").Status)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "triggered")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(r.Stdout.String()+r.Stderr.String(), "WATCHDOG=trigger") {
		t.Errorf("the log does not say WATCHDOG=trigger")
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestNotify_ExtendTimeoutAndErrno: EXTEND_TIMEOUT_USEC moves a start_timeout
// that would otherwise fail a slow start, and ERRNO= is named in the
// reason of the exit that follows it.
func TestNotify_ExtendTimeoutAndErrno(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		t.Skip("systemd-notify not installed (Debian package systemd, in TEST_DEBS)")
	}
	r := ffStartHTTP(t, `
processes:
  slow:
    command: `+ffq(`systemd-notify EXTEND_TIMEOUT_USEC=3000000; sleep 1.5; `+ev("slow", "ready")+`; systemd-notify --ready; exec sleep 600`)+`
    ready: {notify: systemd}
    start_timeout: 1s
  bad:
    command: `+ffq(`systemd-notify ERRNO=2; exit 1`)+`
    restart: {policy: on-failure, backoff: 10s}
    ready: {notify: systemd}
`)
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		return s.proc("slow").State == "running" && strings.Contains(s.proc("bad").Reason, "ERRNO=")
	}, "slow not running past its start_timeout, or bad's reason without ERRNO")
	if p := st.proc("slow"); p.Restarts != 0 {
		t.Errorf("slow restarted %d times: its start_timeout was not extended", p.Restarts)
	}
	if want := "exited with code 1 (ERRNO=2: no such file or directory)"; st.proc("bad").Reason != want {
		t.Errorf("bad reason %q, want %q", st.proc("bad").Reason, want)
	}
	ffStopClean(t, r, 10*time.Second)
}
