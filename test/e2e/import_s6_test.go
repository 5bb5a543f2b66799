package e2e

// Black-box runs of s6-overlay trees converted by podvisor import, with
// stand-in programs (shell scripts) for the services: each checks what
// s6-overlay gives them, seen from outside (files the scripts write, the
// event file, /status, podvisor's exit code and timing).

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sev is ev for a script file: the shell reads $$ itself (no podvisor
// load in between).
func sev(name, what string) string { return strings.ReplaceAll(ev(name, what), "$$$$", "$$") }

// TestImportS6RunsLikeS6 converts an s6-overlay v3 tree with two
// cont-init.d scripts, a notifying longrun with an s6-log logger and a
// timeout-kill, a longrun that depends on it, and a services.d service,
// and checks what s6-overlay would give: cont-init.d in name order before
// any service; the run script in its service directory (it reads
// ./data); the dependent started only after the newline on fd 3; the
// services.d service after the user bundle is up; the producer's output in
// s6-log's directory; and, at the stop, SIGKILL after timeout-kill (1.5 s)
// to a service that ignores SIGTERM, not after podvisor's default 10 s.
func TestImportS6RunsLikeS6(t *testing.T) {
	root := t.TempDir()
	rc := "etc/s6-overlay/s6-rc.d/"
	logDir := filepath.Join(root, "var/log/main")
	writeFiles(t, root, map[string]string{
		"etc/cont-init.d/10-first":          "#!/bin/sh\n" + sev("init-10", "done") + "\n",
		"etc/cont-init.d/02-second":         "#!/bin/sh\n" + sev("init-02", "done") + "\n",
		rc + "svc-main/type":                "longrun\n",
		rc + "svc-main/notification-fd":     "3\n",
		rc + "svc-main/timeout-kill":        "1500\n",
		rc + "svc-main/producer-for":        "svc-main-log\n",
		rc + "svc-main/dependencies.d/base": "",
		rc + "svc-main/data/greeting":       "hello from ./data\n",
		rc + "svc-main/run": `#!/bin/sh
pwd > "$E2E_DIR/main.cwd"
` + sev("main", "start") + `
cat ./data/greeting
trap '` + strings.ReplaceAll(sev("main", "term"), "'", `'\''`) + `' TERM
` + sev("main", "ready") + `
echo >&3
exec 3>&-
while :; do sleep 0.1; done
`,
		rc + "svc-main-log/type":                                      "longrun\n",
		rc + "svc-main-log/consumer-for":                              "svc-main\n",
		rc + "svc-main-log/pipeline-name":                             "main-pipeline\n",
		rc + "svc-main-log/run":                                       "#!/bin/sh\nexec s6-log n3 s1000000 " + logDir + "\n",
		rc + "svc-after/type":                                         "longrun\n",
		rc + "svc-after/dependencies.d/svc-main":                      "",
		rc + "svc-after/run":                                          "#!/bin/sh\n" + sev("after", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
		"etc/s6-overlay/user-bundles.d/user/type":                     "bundle\n",
		"etc/s6-overlay/user-bundles.d/user/contents.d/main-pipeline": "",
		"etc/s6-overlay/user-bundles.d/user/contents.d/svc-after":     "",
		"etc/services.d/late/run":                                     "#!/bin/sh\n" + sev("late", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
		"var/log/main/.keep":                                          "",
	})
	yaml, _ := runImport(t, "--from", "s6", root)
	for _, want := range []string{"working_dir: " + filepath.Join(root, rc, "svc-main"), "timeout: 1.5s", `notify: "fd:3"`, "file: " + logDir + "/current"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("procs.yaml lacks %q:\n%s", want, yaml)
		}
	}
	r := startPodvisor(t, yaml, withHTTP())
	waitReady(t, r, 30*time.Second)
	late := r.WaitEvent(t, "late", "start", 20*time.Second)
	after := r.WaitEvent(t, "after", "start", 20*time.Second)
	ready := r.WaitEvent(t, "main", "ready", 10*time.Second)
	start := r.WaitEvent(t, "main", "start", 10*time.Second)
	i02 := r.WaitEvent(t, "init-02", "done", 10*time.Second)
	i10 := r.WaitEvent(t, "init-10", "done", 10*time.Second)
	if !i10.At.After(i02.At) || !start.At.After(i10.At) {
		t.Errorf("order init-02 %v, init-10 %v, svc-main %v: want cont-init.d in name order, then the services", i02.At, i10.At, start.At)
	}
	if !after.At.After(ready.At) {
		t.Errorf("svc-after started at %v, before svc-main notified readiness at %v", after.At, ready.At)
	}
	if !late.At.After(ready.At) {
		t.Errorf("services.d late started at %v, before the user bundle was up (svc-main ready at %v)", late.At, ready.At)
	}
	waitFileHolds(t, filepath.Join(r.Dir, "main.cwd"), filepath.Join(root, rc, "svc-main"), "svc-main's working directory")
	waitFileHolds(t, filepath.Join(logDir, "current"), "hello from ./data", "s6-log's current file (svc-main's output)")
	if r.Stdout.Contains("hello from ./data") {
		t.Errorf("svc-main's output reached podvisor's stdout, not its logger's directory:\n%s", r.Stdout)
	}
	mainPid := eventPids(t, r, [2]string{"main", "start"})[0]
	r.Signal(syscall.SIGTERM)
	_, took := r.Wait(30 * time.Second)
	if _, ok := findEvent(r.ReadEvents(t), "main", "term"); !ok {
		t.Errorf("svc-main got no SIGTERM before its SIGKILL")
	}
	// SIGKILL came at timeout-kill: not before it, and well before the
	// 10 s podvisor waits without one.
	if took < 1500*time.Millisecond || took >= 8*time.Second {
		t.Errorf("podvisor took %v to stop svc-main (it ignores SIGTERM), want timeout-kill's 1.5s before SIGKILL", took)
	}
	if err := syscall.Kill(mainPid, 0); err == nil {
		t.Errorf("svc-main pid %d still exists", mainPid)
	}
}

// TestImportS6FinishHaltsContainer converts services whose finish scripts
// speak to s6-overlay: worker's exits 125 (s6-supervise: do not restart
// it, the container goes on), app's writes the exit code and halts the
// container. worker exits 7 and stays down while the rest runs; then app
// exits 3 and podvisor ends with 3, the code s6-overlay's halt would give,
// other services stopped with it.
func TestImportS6FinishHaltsContainer(t *testing.T) {
	root := t.TempDir()
	rc := "etc/s6-overlay/s6-rc.d/"
	writeFiles(t, root, map[string]string{
		rc + "worker/type":            "longrun\n",
		rc + "worker/run":             "#!/bin/sh\n" + sev("worker", "start") + "\nexit 7\n",
		rc + "worker/finish":          "#!/bin/sh\n# never restart: the next deploy runs it again\nexit 125\n",
		rc + "other/type":             "longrun\n",
		rc + "other/run":              "#!/bin/sh\n" + sev("other", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
		rc + "user/type":              "bundle\n",
		rc + "user/contents.d/worker": "",
		rc + "user/contents.d/other":  "",
		"etc/services.d/app/run":      "#!/bin/sh\n" + sev("app", "start") + "\nwhile [ ! -e \"$E2E_DIR/go\" ]; do sleep 0.05; done\nexit 3\n",
		"etc/services.d/app/finish": `#!/bin/sh
if test "$1" -eq 256 ; then
  e=$((128 + $2))
else
  e="$1"
fi
echo "$e" > /run/s6-linux-init-container-results/exitcode
exec /run/s6/basedir/bin/halt
`,
	})
	yaml, _ := runImport(t, "--from", "s6", root)
	r := startPodvisor(t, yaml, withHTTP())
	r.WaitEvent(t, "app", "start", 20*time.Second)
	otherPid := eventPids(t, r, [2]string{"other", "start"})[0]
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool { return s.proc("worker").State == "stopped" }, "worker stopped after its exit (finish exits 125)")
	if n := len(filterEvents(r.ReadEvents(t), "worker", "start")); n != 1 || r.Exited() {
		t.Fatalf("worker started %d times (want 1: no restart), podvisor exited: %v", n, r.Exited())
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := r.Wait(30 * time.Second); code != 3 {
		t.Fatalf("exit code %d, want app's 3 (its finish halts the container with it); stderr:\n%s", code, r.Stderr)
	}
	if err := syscall.Kill(otherPid, 0); err == nil {
		t.Errorf("other (pid %d) still runs after the container ended", otherPid)
	}
	if n := len(filterEvents(r.ReadEvents(t), "worker", "start")); n != 1 {
		t.Errorf("worker started %d times, want 1", n)
	}
}
