package e2e

// Black-box runs of converted process-compose daemons and of what import
// now translates from systemd (ExecReload=, signal exit statuses, the 90 s
// stop default and the teardown budget it needs).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pcDaemonFiles are a stand-in daemon and its stop script: bin/daemon PID
// double-forks (the starter exits at once, its child exits after starting
// the daemon in a session of its own), and the daemon writes its pid to PID
// and a file PID.up, then runs until SIGTERM. bin/stopd PID is a
// shutdown.command: it kills the pid in the file and records that it ran
// in PID.stopped.
func pcDaemonFiles() map[string]string {
	return map[string]string{
		"bin/daemon": `#!/bin/sh
( setsid sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; : > "$1.up"; trap "exit 0" TERM; while :; do sleep 0.1; done' sh "$1" </dev/null >/dev/null 2>&1 & )
exit 0
`,
		"bin/stopd": `#!/bin/sh
echo "stop $(cat "$1")" >> "$1.stopped"
kill "$(cat "$1")"
`,
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	var pid int
	eventually(t, 20*time.Second, func() bool {
		b, _ := os.ReadFile(file)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	}, "no pid in %s", file)
	return pid
}

func alive(pid int) bool { return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestImportProcessComposeDaemonPidFile: an is_daemon process whose
// command names the daemon's pid file is supervised through it: /status
// shows the daemon's pid, the readiness probe gates a dependent, and at
// teardown the shutdown.command runs (the stand-in records it) and the
// daemon is gone, exit 0.
func TestImportProcessComposeDaemonPidFile(t *testing.T) {
	dir := t.TempDir()
	files := pcDaemonFiles()
	pidFile := filepath.Join(dir, "run", "cache.pid")
	files["run/.keep"] = ""
	files["process-compose.yaml"] = fmt.Sprintf(`version: "0.5"
processes:
  cache:
    command: "%[1]s/bin/daemon %[2]s"
    is_daemon: true
    readiness_probe:
      exec:
        command: "test -e %[2]s.up"
      period_seconds: 1
    shutdown:
      command: "%[1]s/bin/stopd %[2]s"
      timeout_seconds: 5
  web:
    command: "%[3]s; trap 'exit 0' TERM; while :; do sleep 0.1; done"
    depends_on:
      cache:
        condition: process_healthy
`, dir, pidFile, strings.ReplaceAll(ev("web", "start"), `"`, `\"`))
	writeFiles(t, dir, files)
	yaml, report := runImport(t, filepath.Join(dir, "process-compose.yaml"))
	if !strings.Contains(yaml, "daemon: {pid_file: "+pidFile+"}") || !strings.Contains(report, "cache.daemon: is_daemon") {
		t.Fatalf("the pid file named in the command did not become daemon.pid_file:\n%s\n%s", yaml, report)
	}
	r := startPodvisor(t, yaml, withHTTP())
	waitReady(t, r, 30*time.Second)
	pid := readPid(t, pidFile)
	st := ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool { return s.proc("cache").Pid == pid }, "cache supervised as the daemon's pid")
	if p := st.proc("cache"); p.State != "running" || !p.Ready {
		t.Errorf("cache: state %s ready %v, want running and ready", p.State, p.Ready)
	}
	r.WaitEvent(t, "web", "start", 10*time.Second)
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
	}
	if got := strings.TrimSpace(readFile(pidFile + ".stopped")); got != fmt.Sprintf("stop %d", pid) {
		t.Errorf("shutdown.command did not run once at teardown: %q", got)
	}
	if alive(pid) {
		t.Errorf("daemon %d still running after podvisor exited", pid)
	}
}

// TestImportProcessComposeDaemonLaunched: an is_daemon process with no pid
// file hint runs as process-compose runs it: the starter exits, the process
// counts as up (completed, ready once its probe passed) while the daemon
// runs on unwatched, and the shutdown.command runs at teardown.
func TestImportProcessComposeDaemonLaunched(t *testing.T) {
	dir := t.TempDir()
	files := pcDaemonFiles()
	state := filepath.Join(dir, "state", "svc") // no .pid: no hint
	files["state/.keep"] = ""
	files["process-compose.yaml"] = fmt.Sprintf(`version: "0.5"
processes:
  svc:
    command: "%[1]s/bin/daemon %[2]s"
    is_daemon: true
    readiness_probe:
      exec:
        command: "test -e %[2]s.up"
      period_seconds: 1
    shutdown:
      command: "%[1]s/bin/stopd %[2]s"
      timeout_seconds: 5
`, dir, state)
	writeFiles(t, dir, files)
	yaml, _ := runImport(t, filepath.Join(dir, "process-compose.yaml"))
	if !strings.Contains(yaml, "type: oneshot") || strings.Contains(yaml, "daemon: {pid_file") {
		t.Fatalf("want a oneshot without daemon:\n%s", yaml)
	}
	r := startPodvisor(t, yaml, withHTTP())
	waitReady(t, r, 30*time.Second)
	pid := readPid(t, state)
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool { p := s.proc("svc"); return p.State == "completed" && p.Ready }, "svc completed and ready")
	if !alive(pid) {
		t.Fatalf("the daemon %d died with its starter", pid)
	}
	if _, err := os.Stat(state + ".stopped"); err == nil {
		t.Fatalf("shutdown.command ran before the teardown")
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
	}
	if got := strings.TrimSpace(readFile(state + ".stopped")); got != fmt.Sprintf("stop %d", pid) {
		t.Errorf("shutdown.command did not run once at teardown: %q", got)
	}
	if alive(pid) {
		t.Errorf("daemon %d still running after podvisor exited", pid)
	}
}

// TestImportSystemdStopBudget: two units without TimeoutStopSec= keep
// systemd's 90 s each, as podvisor's loader reads the written file (check
// counts 180 s along the chain), and the shutdown_timeout import writes
// covers the chain, so check passes without the teardown warning. The
// 90 s are not waited out here: that takes 90 s.
func TestImportSystemdStopBudget(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"bin/loop":          "#!/bin/sh\n" + ev("$1", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
		"units/db.service":  fmt.Sprintf("[Service]\nExecStart=%s/bin/loop db\n", dir),
		"units/app.service": fmt.Sprintf("[Unit]\nAfter=db.service\nRequires=db.service\n\n[Service]\nExecStart=%s/bin/loop app\n", dir),
	})
	yaml, report := runImport(t, filepath.Join(dir, "units"))
	if strings.Count(yaml, "timeout: 90s") != 2 || !strings.Contains(yaml, "shutdown_timeout: 185s") || !strings.Contains(report, "shutdown_timeout: 185s") {
		t.Fatalf("want 90s stop timeouts and shutdown_timeout 185s, said in the report:\n%s\n%s", yaml, report)
	}
	file := filepath.Join(dir, "procs.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	res := ffRunCLI(t, dir, 10*time.Second, "check", "-c", file, "-o", "json")
	if res.Code != 0 || !strings.Contains(res.Stdout, `"ok":true`) || strings.Contains(res.Stdout, "teardown chain") {
		t.Errorf("check: exit %d, want 0 without the teardown warning:\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	// podvisor's own reading of the stop timeouts: with a 1s budget,
	// check names what the chain adds up to.
	tight := strings.Replace(yaml, "\nshutdown_timeout: 185s\n", "\nshutdown_timeout: 1s\n", 1)
	if err := os.WriteFile(file, []byte(tight), 0o644); err != nil {
		t.Fatal(err)
	}
	res = ffRunCLI(t, dir, 10*time.Second, "check", "-c", file)
	if !strings.Contains(res.Stdout+res.Stderr, "app -> db add up to 3m,") {
		t.Errorf("check does not count 90s per unit:\n%s%s", res.Stdout, res.Stderr)
	}
	r := startPodvisor(t, yaml, withHTTP())
	waitReady(t, r, 30*time.Second)
	// the converted units run (the 90 s are not waited out: see above)
	r.WaitEvent(t, "db", "start", 10*time.Second)
	r.WaitEvent(t, "app", "start", 10*time.Second)
	stopClean(t, r)
}

// TestImportSystemdReloadAndSignalStatuses: ExecReload=/bin/kill -HUP
// $MAINPID becomes reload: {signal: SIGHUP}, and podvisor reload delivers
// it; RestartForceExitStatus=SIGUSR1 restarts a unit killed by SIGUSR1
// despite Restart=no.
func TestImportSystemdReloadAndSignalStatuses(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, func(dir string) map[string]string {
		return map[string]string{
			"bin/hup":            "#!/bin/sh\ntrap 'echo hup >> \"$E2E_DIR/hup.out\"' HUP\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
			"bin/usr1":           "#!/bin/sh\necho run >> \"$E2E_DIR/usr1.runs\"\n[ \"$(wc -l < \"$E2E_DIR/usr1.runs\")\" -ge 2 ] || kill -USR1 $$\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
			"units/hup.service":  fmt.Sprintf("[Service]\nExecStart=%s/bin/hup\nExecReload=/bin/kill -HUP $MAINPID\nTimeoutStopSec=5\n", dir),
			"units/usr1.service": fmt.Sprintf("[Service]\nExecStart=%s/bin/usr1\nRestart=no\nRestartSec=100ms\nRestartForceExitStatus=SIGUSR1\nTimeoutStopSec=5\n", dir),
		}
	}(dir))
	yaml, _ := runImport(t, filepath.Join(dir, "units"))
	r := startPodvisor(t, strings.Replace(yaml, "version: 1\n", "version: 1\ncontrol: \"{{dir}}/c.sock\"\n", 1), withHTTP())
	if !strings.Contains(yaml, "reload: {signal: SIGHUP}") || !strings.Contains(yaml, "signals: [SIGUSR1]") {
		t.Fatalf("ExecReload= or RestartForceExitStatus= not translated:\n%s", yaml)
	}
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool { p := s.proc("usr1"); return p.State == "running" && p.Restarts == 1 }, "usr1 restarted once after SIGUSR1 and running")
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool { return s.proc("hup").State == "running" }, "hup running")
	mustCtl(t, r, 0, "reload", "hup")
	waitFileHolds(t, filepath.Join(r.Dir, "hup.out"), "hup", "what the unit saw of podvisor reload")
	stopClean(t, r)
}
