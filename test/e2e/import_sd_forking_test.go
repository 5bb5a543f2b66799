package e2e

// A systemd Type=forking unit without PIDFile= (issue 37): systemd cannot
// name one main pid when the start command leaves several processes, so
// the unit is up once the start command exits and ExecStop= ends the
// daemons. The converted file runs that way under podvisor.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportSystemdForkingNoPIDFile: a launcher that starts two
// double-forking workers and exits (the stand-ins of pcDaemonFiles), as
// `celery multi start` does. The converted process completes and is ready
// when the launcher exits, its dependent starts after it, the workers run
// on, ExecStop= runs only at teardown and stops both, and podvisor exits 0.
func TestImportSystemdForkingNoPIDFile(t *testing.T) {
	dir := t.TempDir()
	files := pcDaemonFiles()
	state := filepath.Join(dir, "state", "w")
	files["state/.keep"] = ""
	files["bin/loop"] = "#!/bin/sh\n" + ev("$1", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n"
	files["units/workers.service"] = fmt.Sprintf(`[Unit]
Description=two workers, no pid file

[Service]
Type=forking
Environment=STATE=%[2]s
ExecStart=/bin/sh -c '%[1]s/bin/daemon ${STATE}1 && %[1]s/bin/daemon ${STATE}2'
ExecStop=/bin/sh -c '%[1]s/bin/stopd ${STATE}1; %[1]s/bin/stopd ${STATE}2'
TimeoutStopSec=10
Restart=always
`, dir, state)
	files["units/app.service"] = fmt.Sprintf("[Unit]\nAfter=workers.service\nRequires=workers.service\n\n[Service]\nExecStart=%s/bin/loop app\nTimeoutStopSec=10\n", dir)
	writeFiles(t, dir, files)
	yaml, report := runImport(t, filepath.Join(dir, "units"))
	if !strings.Contains(yaml, "type: oneshot  # approximated: Type=forking without PIDFile=") ||
		!strings.Contains(report, "workers.type: Type=forking without PIDFile=") {
		t.Fatalf("want a oneshot, said in the file and the report:\n%s\n%s", yaml, report)
	}
	r := startPodvisor(t, yaml, withHTTP())
	waitReady(t, r, 30*time.Second)
	pid1, pid2 := readPid(t, state+"1"), readPid(t, state+"2")
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
		p := s.proc("workers")
		return p.State == "completed" && p.Ready
	}, "workers completed and ready")
	r.WaitEvent(t, "app", "start", 10*time.Second)
	for _, pid := range []int{pid1, pid2} {
		if !alive(pid) {
			t.Fatalf("worker %d died with its launcher", pid)
		}
	}
	if _, err := os.Stat(state + "1.stopped"); err == nil {
		t.Fatalf("ExecStop= ran before the teardown")
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0 (ExecStop= ended the workers before the final sweep); output:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
	}
	for i, pid := range []int{pid1, pid2} {
		f := fmt.Sprintf("%s%d.stopped", state, i+1)
		if got := strings.TrimSpace(readFile(f)); got != fmt.Sprintf("stop %d", pid) {
			t.Errorf("ExecStop= did not stop worker %d once at teardown: %q", pid, got)
		}
		if alive(pid) {
			t.Errorf("worker %d still running after podvisor exited", pid)
		}
	}
}
