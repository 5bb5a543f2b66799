package e2e

// Black-box tests of the rest of sd_notify (issue 35, item 7): WATCHDOG_PID,
// STOPPING=1, MAINPID=, daemon pid files and RELOADING=1 with a reload
// action, against the real binary with Debian's systemd-notify.

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withSystemdNotify marks t parallel, and skips it without Debian's
// systemd-notify.
func withSystemdNotify(t *testing.T) {
	t.Helper()
	t.Parallel()
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		t.Skip("systemd-notify not installed (Debian package systemd, in TEST_DEBS)")
	}
}

// TestNotify_WatchdogPid: with the watchdog on, the child gets WATCHDOG_PID
// set to its own pid (sd_watchdog_enabled(3)), so a descendant that
// inherits the environment can tell the watchdog is not its own; the
// process still pings through systemd-notify and stays up.
func TestNotify_WatchdogPid(t *testing.T) {
	withSystemdNotify(t)
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
	if want := fmt.Sprint(e.Pid()); got != want || e.Pid() != st.proc("wd").Pid {
		t.Errorf("WATCHDOG_PID=%s in the child of pid %d (/status pid %d), want its own pid", got, e.Pid(), st.proc("wd").Pid)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestNotify_Stopping: a service that says STOPPING=1 stops on its own: it
// is "stopping" at once (no signal from podvisor), its death by SIGTERM is
// a clean stop and not a crash (restart: never does not end the run), and
// one that hangs after saying so gets SIGKILL at its stop.timeout.
func TestNotify_Stopping(t *testing.T) {
	withSystemdNotify(t)
	r := ffStartHTTP(t, `
processes:
  quits:
    command: `+ffq(`systemd-notify --ready; while [ ! -e "$E2E_DIR/go" ]; do sleep 0.05; done; systemd-notify STOPPING=1; `+ev("quits", "stopping")+`; sleep 0.3; kill -TERM $$$$`)+`
    ready: {notify: systemd}
    restart: never
  hangs:
    command: `+ffq(`trap "" TERM; systemd-notify --ready; `+ev("hangs", "presend")+`; systemd-notify STOPPING=1; `+ev("hangs", "stopping")+`; exec sleep 600`)+`
    ready: {notify: systemd}
    stop: {timeout: 1s}
    restart: {policy: on-failure, backoff: 1h}
`)
	r.WaitEvent(t, "hangs", "stopping", 15*time.Second)
	e := r.WaitEvent(t, "hangs", "presend", time.Second) // stamped before STOPPING=1 was sent
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		return s.proc("hangs").State == "stopping" || s.proc("hangs").State == "backoff"
	}, "hangs not stopping after STOPPING=1")
	if p := st.proc("hangs"); p.State == "stopping" && !strings.Contains(p.Reason, "STOPPING=1") {
		t.Errorf("hangs stopping with reason %q, want it to name STOPPING=1", p.Reason)
	}
	st = ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("hangs").State == "backoff" }, "hangs not killed at its stop timeout")
	if p := st.proc("hangs"); p.ExitCode == nil || *p.ExitCode != 137 {
		t.Errorf("hangs exit code %v, want 137 (SIGKILL at the stop timeout)", p.ExitCode)
	}
	if d := time.Since(e.At); d < time.Second {
		t.Errorf("hangs killed %v after STOPPING=1, before its 1s stop timeout", d)
	}

	ffWrite(t, r.Dir, "go", nil, 0o644)
	r.WaitEvent(t, "quits", "stopping", 10*time.Second)
	st = ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("quits").State != "running" }, "quits still running after STOPPING=1")
	if p := st.proc("quits"); p.State == "stopping" && !strings.Contains(p.Reason, "STOPPING=1") {
		t.Errorf("quits stopping with reason %q", p.Reason)
	}
	st = ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("quits").State == "stopped" || r.Exited() }, "quits not stopped")
	if r.Exited() {
		t.Fatalf("podvisor ended when a restart: never service stopped on its own after STOPPING=1:\n%s", r.Stdout)
	}
	if p := st.proc("quits"); p.Reason != "stopped on its own (STOPPING=1), exit code 143" {
		t.Errorf("quits reason %q", p.Reason)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestNotify_MainPID: a forking parent names its daemon (systemd-notify
// --pid, MAINPID=) and exits: podvisor supervises the daemon in its place.
// /status shows the daemon's pid, the daemon's death is the process's exit
// (code and reason), and the stop signal reaches the daemon though it left
// the process group (setsid). A MAINPID= naming a process outside the
// process's tree is refused (sent from python: systemd-notify --pid run as
// root sends the named pid's credentials, which the socket refuses anyway).
func TestNotify_MainPID(t *testing.T) {
	withSystemdNotify(t)
	stranger := exec.Command("sleep", "600")
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stranger.Process.Kill(); stranger.Wait() })
	daemon := func(name string) string {
		return ffq(`setsid sh -c 'onterm() { ` + ev(name, "term") + `; exit 0; }; trap onterm TERM; ` + ev(name, "daemon") + `; while :; do sleep 0.1; done' & ` +
			`systemd-notify --pid=$$!; systemd-notify --ready; exit 0`)
	}
	r := ffStartHTTP(t, `
processes:
  d:
    command: `+daemon("d")+`
    ready: {notify: systemd}
    restart: never
  e:
    command: `+daemon("e")+`
    ready: {notify: systemd}
    restart: {policy: on-failure, backoff: 1h}
  evil:
    command: [`+obPython(t)+`, "-S", "-c", "import os, socket, time; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'MAINPID=' + os.environ['STRANGER'].encode() + b'\\nREADY=1', os.environ['NOTIFY_SOCKET']); time.sleep(600)"]
    ready: {notify: systemd}
`, withEnv("STRANGER="+fmt.Sprint(stranger.Process.Pid)))
	dPid := r.WaitEvent(t, "d", "daemon", 15*time.Second).Pid()
	ePid := r.WaitEvent(t, "e", "daemon", 15*time.Second).Pid()
	st := ffWaitStatus(t, r, 15*time.Second, func(s ffStatus) bool {
		return s.proc("d").Pid == dPid && s.proc("e").Pid == ePid && s.proc("d").State == "running" && s.proc("e").State == "running" && s.proc("evil").State == "running"
	}, "the daemons' pids not in /status")
	if p := st.proc("evil"); p.Pid == stranger.Process.Pid {
		t.Errorf("evil took over a process outside its tree: %+v", p)
	}
	// The warning is logged beside the READY=1 that made evil running:
	// it may reach the output a moment after /status shows that.
	eventually(t, 10*time.Second, func() bool {
		return strings.Contains(r.Stdout.String()+r.Stderr.String(), "MAINPID refused")
	}, "no warning for the refused MAINPID")

	daemonDiesAndStops(t, r, "e", ePid, "d")
}

// daemonDiesAndStops kills pid, the daemon of process dies, and checks
// that its death is the process's exit (code 137, in backoff); then it
// stops podvisor and checks that the daemon of process stays got the stop
// signal.
func daemonDiesAndStops(t *testing.T, r *Run, dies string, pid int, stays string) {
	t.Helper()
	// Until the forking parent has exited, the daemon is its child: the
	// parent's shell would reap it (a limit docs/reference.md states), so
	// it dies only once podvisor (the subreaper) is its parent.
	eventually(t, 10*time.Second, func() bool {
		st, err := readStat(pid)
		return err == nil && st.PPid == r.Pid()
	}, "%s's daemon %d was not handed to podvisor", dies, pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc(dies).State == "backoff" }, dies+"'s daemon died, it is not in backoff")
	if p := st.proc(dies); p.ExitCode == nil || *p.ExitCode != 137 || p.Reason != "exited with code 137" {
		t.Errorf("%s after its daemon's SIGKILL: %+v", dies, p)
	}
	ffStopClean(t, r, 10*time.Second)
	if _, ok := findEvent(r.ReadEvents(t), stays, "term"); !ok {
		t.Errorf("%s's daemon got no stop signal; events:\n%s", stays, readFile(r.Events))
	}
}

// TestDaemon_PidFile: a command that forks a daemon, which writes its pid
// file, and exits 0 (`daemon: {pid_file}`): the daemon is supervised in its
// place (its pid in /status, its death the process's exit, the stop signal
// reaches it). A pid file that never comes, or that is a symlink, fails the
// start with the reason.
func TestDaemon_PidFile(t *testing.T) {
	t.Parallel()
	daemon := func(name string) string {
		return ffq(`setsid sh -c 'onterm() { ` + ev(name, "term") + `; exit 0; }; trap onterm TERM; ` + ev(name, "daemon") +
			`; echo $$$$ > "$E2E_DIR/` + name + `.pid"; while :; do sleep 0.1; done' >/dev/null 2>&1 & exit 0`)
	}
	r := ffStartHTTP(t, `
processes:
  fk:
    command: `+daemon("fk")+`
    daemon: {pid_file: "${E2E_DIR}/fk.pid"}
    restart: never
  fk2:
    command: `+daemon("fk2")+`
    daemon: {pid_file: "${E2E_DIR}/fk2.pid"}
    restart: {policy: on-failure, backoff: 1h}
  missing:
    command: "exit 0"
    daemon: {pid_file: "${E2E_DIR}/none.pid"}
    start_timeout: 1s
    restart: {policy: on-failure, backoff: 1h}
  link:
    command: `+ffq(`sleep 600 & echo $$! > "$E2E_DIR/real.pid"; ln -s "$E2E_DIR/real.pid" "$E2E_DIR/link.pid"; exit 0`)+`
    daemon: {pid_file: "${E2E_DIR}/link.pid"}
    restart: {policy: on-failure, backoff: 1h}
`)
	fkPid := r.WaitEvent(t, "fk", "daemon", 15*time.Second).Pid()
	fk2Pid := r.WaitEvent(t, "fk2", "daemon", 15*time.Second).Pid()
	st := ffWaitStatus(t, r, 15*time.Second, func(s ffStatus) bool {
		return s.proc("fk").Pid == fkPid && s.proc("fk2").Pid == fk2Pid &&
			s.proc("missing").State == "backoff" && s.proc("link").State == "backoff"
	}, "the daemons not supervised, or the bad pid files not failed")
	if p := st.proc("fk"); p.State != "running" {
		t.Errorf("fk %+v, want running", p)
	}
	if p := st.proc("missing"); !strings.HasPrefix(p.Reason, "daemon: pid file ") || !strings.Contains(p.Reason, "no such file") {
		t.Errorf("missing reason %q", p.Reason)
	}
	if p := st.proc("link"); !strings.Contains(p.Reason, "is a symlink") {
		t.Errorf("link reason %q", p.Reason)
	}
	daemonDiesAndStops(t, r, "fk2", fk2Pid, "fk")
}

// TestReload_Process: `podvisor reload NAME` runs the process's reload:
// action; with notify readiness it is "reloading" in /status and podvisor
// status until READY=1 again; a RELOADING=1 the process sends on its own
// does the same; a process without reload: is refused, saying why.
func TestReload_Process(t *testing.T) {
	withSystemdNotify(t)
	waitDone := `while [ ! -e "$E2E_DIR/done" ]; do sleep 0.05; done; rm "$E2E_DIR/done"; systemd-notify --ready`
	r := ffStartHTTP(t, `
control: "{{dir}}/c.sock"
processes:
  nr:
    command: `+ffq(`onhup() { `+ev("nr", "hup")+`; systemd-notify RELOADING=1 MONOTONIC_USEC=$$(sed "s/ .*//;s/[.]//" /proc/uptime)0000; `+waitDone+`; }; `+
		`trap onhup HUP; systemd-notify --ready; `+
		`while :; do sleep 0.05; if [ -e "$E2E_DIR/self" ]; then rm "$E2E_DIR/self"; systemd-notify RELOADING=1; `+waitDone+`; fi; done`)+`
    ready: {notify: systemd}
    reload: {signal: HUP}
  plain:
    command: "exec sleep 600"
`)
	ffWaitStatus(t, r, 15*time.Second, func(s ffStatus) bool { return s.proc("nr").State == "running" }, "nr not running")
	code, _, stderr := ctl(t, r, "reload", "plain")
	if code != 1 || !strings.Contains(stderr, "plain: cannot reload: no reload: action") {
		t.Errorf("reload plain: exit %d, stderr %q; want 1 and the reason", code, stderr)
	}
	code, stdout, stderr := ctl(t, r, "reload", "nr")
	if code != 0 || !strings.Contains(stdout, "nr: reloading: sent SIGHUP") {
		t.Fatalf("reload nr: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	r.WaitEvent(t, "nr", "hup", 10*time.Second)
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("nr").State == "reloading" }, "nr not reloading after podvisor reload nr")
	if !st.proc("nr").Ready {
		t.Errorf("nr not ready while reloading: %+v", st.proc("nr"))
	}
	if _, out, _ := ctl(t, r, "status", "--addr", r.Addr); !strings.Contains(out, "reloading") {
		t.Errorf("podvisor status does not say reloading:\n%s", out)
	}
	ffWrite(t, r.Dir, "done", nil, 0o644)
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("nr").State == "running" }, "nr still reloading after READY=1")

	ffWrite(t, r.Dir, "self", nil, 0o644)
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("nr").State == "reloading" }, "nr not reloading after its own RELOADING=1")
	ffWrite(t, r.Dir, "done", nil, 0o644)
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("nr").State == "running" }, "nr still reloading after READY=1")
	ffStopClean(t, r, 10*time.Second)
}
