package e2e

// Black-box tests of the rest of sd_notify (issue 35, item 7): WATCHDOG_PID,
// STOPPING=1, MAINPID=, daemon pid files and RELOADING=1 with a reload
// action, against the real binary with Debian's systemd-notify.

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needSystemdNotify skips t without Debian's systemd-notify.
func needSystemdNotify(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		t.Skip("systemd-notify not installed (Debian package systemd, in TEST_DEBS)")
	}
}

// TestNotify_WatchdogPid: with the watchdog on, the child gets WATCHDOG_PID
// set to its own pid (sd_watchdog_enabled(3)), so a descendant that
// inherits the environment can tell the watchdog is not its own; the
// process still pings through systemd-notify and stays up.
func TestNotify_WatchdogPid(t *testing.T) {
	t.Parallel()
	needSystemdNotify(t)
	r := ffStartHTTP(t, `
processes:
  wd:
    command: `+ffq(ev("wd", "wdpid=$${WATCHDOG_PID:-unset}")+`; systemd-notify --ready; while :; do systemd-notify WATCHDOG=1; sleep 0.2; done`)+`
    ready: {notify: systemd}
    watchdog: 2s
`)
	st := ffWaitStatus(t, r, 15*time.Second, func(s ffStatus) bool { return s.proc("wd").State == "running" }, "wd not running")
	var e event
	eventually(t, 10*time.Second, func() bool {
		for _, x := range r.ReadEvents(t) {
			if x.Name == "wd" && strings.HasPrefix(x.Event, "wdpid=") {
				e = x
				return true
			}
		}
		return false
	}, "no wdpid event")
	got := strings.TrimPrefix(e.Event, "wdpid=")
	if want := strconv.Itoa(e.Pid()); got != want || e.Pid() != st.proc("wd").Pid {
		t.Errorf("WATCHDOG_PID=%s in the child of pid %d (/status pid %d), want its own pid", got, e.Pid(), st.proc("wd").Pid)
	}
	ffStopClean(t, r, 10*time.Second)
}
