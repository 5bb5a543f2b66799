package e2e

// A systemd Type=forking unit with PIDFile= (issue 37): systemd reads the
// daemon's pid once the start command exited, restarts the unit by
// Restart= when that daemon ends, starts its dependents once it is up,
// and at stop sends KillSignal= (SIGTERM) to the daemon. The converted
// file (daemon: {pid_file}) runs that way under podvisor.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sdForkdFiles: bin/forkd STATE starts a daemon in a new session and
// exits at once, as a classic forking daemon's parent does: the daemon
// writes STATE.pid (after its parent exited), records a SIGTERM in
// STATE.term with its pid, and exits 0 when STATE.quit appears. bin/app
// records whether STATE.pid named a live process when it started.
func sdForkdFiles(state string) map[string]string {
	return map[string]string{
		"bin/forkd": `#!/bin/sh
( setsid sh -c 'trap "echo term \$\$ >> \"$1.term\"; exit 0" TERM
sleep 0.2
echo $$ > "$1.pid.tmp"; mv "$1.pid.tmp" "$1.pid"
while :; do if [ -e "$1.quit" ]; then rm -f "$1.quit"; exit 0; fi; sleep 0.1; done' sh "$1" </dev/null >/dev/null 2>&1 & )
exit 0
`,
		"bin/app": "#!/bin/sh\npid=$(cat " + state + ".pid) && [ -d /proc/$pid ] && echo \"live $pid\" > " + state + ".app\n" +
			ev("app", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
	}
}

// TestImportSystemdForkingPIDFile: under Restart=on-failure a daemon
// killed by SIGKILL, under Restart=always one that exits 0 on its own, is
// noticed and started again (a new daemon, its pid in /status); the
// dependent starts only once the pid file names the live daemon; at
// podvisor's SIGTERM the stop signal reaches the daemon itself (it records
// the SIGTERM, nothing is left for the final sweep) and podvisor exits 0.
func TestImportSystemdForkingPIDFile(t *testing.T) {
	for _, c := range []struct {
		restart string
		end     func(t *testing.T, state string, pid int)
	}{
		{"on-failure", func(t *testing.T, _ string, pid int) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}},
		{"always", func(t *testing.T, state string, _ int) { // a clean exit: on-failure would leave it
			if err := os.WriteFile(state+".quit", nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.restart, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "run", "relay")
			files := sdForkdFiles(state)
			files["run/.keep"] = ""
			files["units/relay.service"] = fmt.Sprintf(`[Unit]
Description=forking relay stand-in

[Service]
Type=forking
PIDFile=%[2]s.pid
ExecStart=%[1]s/bin/forkd %[2]s
Restart=%[3]s
RestartSec=1
TimeoutStopSec=10
`, dir, state, c.restart)
			files["units/app.service"] = fmt.Sprintf("[Unit]\nAfter=relay.service\nRequires=relay.service\n\n[Service]\nExecStart=%s/bin/app\nTimeoutStopSec=10\n", dir)
			writeFiles(t, dir, files)
			yaml, report := runImport(t, filepath.Join(dir, "units"))
			if !strings.Contains(yaml, "daemon: {pid_file: "+state+".pid}") || !strings.Contains(report, "relay: Type=forking, PIDFile=") {
				t.Fatalf("PIDFile= did not become daemon.pid_file:\n%s\n%s", yaml, report)
			}
			r := startPodvisor(t, yaml, withHTTP())
			waitReady(t, r, 30*time.Second)
			pid1 := readPid(t, state+".pid")
			ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
				p := s.proc("relay")
				return p.Pid == pid1 && p.State == "running" && p.Ready
			}, "relay supervised as the daemon's pid, running and ready")
			r.WaitEvent(t, "app", "start", 10*time.Second)
			if got := strings.TrimSpace(readFile(state + ".app")); got != fmt.Sprintf("live %d", pid1) {
				t.Errorf("app started before the pid file named the live daemon %d: %q", pid1, got)
			}

			c.end(t, state, pid1)
			st := ffWaitStatus(t, r, 30*time.Second, func(s ffStatus) bool {
				p := s.proc("relay")
				return p.Pid > 0 && p.Pid != pid1 && p.State == "running" && p.Restarts >= 1
			}, "relay started again after its daemon ended")
			pid2 := st.proc("relay").Pid
			eventually(t, 10*time.Second, func() bool { return !alive(pid1) }, "the first daemon %d still running", pid1)
			if got := readPid(t, state+".pid"); got != pid2 || !alive(pid2) {
				t.Fatalf("pid file names %d, /status %d (alive %v): want the new daemon", got, pid2, alive(pid2))
			}

			r.Signal(syscall.SIGTERM)
			if code, _ := r.Wait(30 * time.Second); code != 0 {
				t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
			}
			if got := strings.TrimSpace(readFile(state + ".term")); got != fmt.Sprintf("term %d", pid2) {
				t.Errorf("the stop signal did not reach the daemon %d once: %q", pid2, got)
			}
			if alive(pid2) {
				t.Errorf("daemon %d still running after podvisor exited", pid2)
			}
			if out := r.Stdout.String() + r.Stderr.String(); strings.Contains(out, "final sweep: terminating") {
				t.Errorf("the daemon was left to the final sweep, not stopped as the process:\n%s", out)
			}
		})
	}
}
