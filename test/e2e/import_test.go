package e2e

// Black-box tests of podvisor import: each converts a setup written as its
// original tool expects it, runs the result with podvisor run, and checks
// real effects (a page served, files written by an init step, the order of
// events) through to a clean teardown (exit 0, nothing left running).

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runImport runs podvisor import with args and returns procs.yaml and the
// report; any exit code but 0 fails the test.
func runImport(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(podvisorBin, append([]string{"import"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("podvisor import %s: %v\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), err, &stderr, &stdout)
	}
	if !strings.Contains(stderr.String(), "check --portable: ok") {
		t.Fatalf("import did not report a passing check:\n%s", &stderr)
	}
	return stdout.String(), stderr.String()
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// fetch GETs url once and returns the status and body (0 when nothing
// answered).
func fetch(url string) (int, string) {
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitReady waits for /readyz to answer 200.
func waitReady(t *testing.T, r *Run, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() bool {
		code, _ := r.Get(t, "/readyz")
		return code == http.StatusOK
	}, "podvisor never became ready; output:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
}

// teardown sends SIGTERM, expects exit 0, and checks that the processes
// whose pids the events recorded, and the listener on addr, are gone.
func teardown(t *testing.T, r *Run, addr string, pids []int) {
	t.Helper()
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0 (clean teardown); output:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after podvisor exited (kill 0: %v)", pid, err)
		}
	}
	if code, _ := fetch("http://" + addr + "/"); code != 0 {
		t.Errorf("%s still answers (%d) after podvisor exited", addr, code)
	}
}

func eventPids(t *testing.T, r *Run, evs ...[2]string) []int {
	t.Helper()
	var pids []int
	for _, e := range evs {
		ev, ok := findEvent(r.ReadEvents(t), e[0], e[1])
		if !ok || ev.Pid() == 0 {
			t.Fatalf("no event %s %s with a pid; events:\n%s", e[0], e[1], readFile(r.Events))
		}
		pids = append(pids, ev.Pid())
	}
	return pids
}

// TestImportSupervisordPair converts a supervisord config in the shape of
// an nginx + php-fpm image (a main file with [include], a web server and a
// second program run as two copies with numprocs) and runs it.
func TestImportSupervisordPair(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"supervisord.conf": `; main supervisord config
[supervisord]
nodaemon=true
logfile=/dev/null

[unix_http_server]
file=/run/supervisor.sock

[include]
files = conf.d/*.conf
`,
		"conf.d/pair.conf": `[program:web]
command=python3 -m http.server --bind 127.0.0.1 %(ENV_WEB_PORT)s
directory=%(here)s/../www
startsecs=1
stopwaitsecs=5
redirect_stderr=true
stdout_logfile=/dev/stdout
stdout_logfile_maxbytes=0

[program:worker]
process_name=%(program_name)s-%(process_num)d
numprocs=2
command=/bin/sh -c 'echo "worker-%(process_num)d up $(date +%%s%%N) $$" >> "$E2E_EVENTS"; echo "worker-%(process_num)d writes to its log"; trap "exit 0" TERM; while :; do sleep 0.1; done'
autorestart=true
startsecs = 1
stopsignal=term
stdout_logfile=%(here)s/../logs/worker-%(process_num)d.log
stdout_logfile_maxbytes=5MB
stdout_logfile_backups=3
`,
		"www/index.html": "hello from the web program\n",
	})
	yaml, report := runImport(t, filepath.Join(src, "supervisord.conf"))
	for _, want := range []string{"worker-0:", "worker-1:", "web:", "# approximated: startsecs=1", "max_size: 5MiB", "max_files: 4"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("procs.yaml lacks %q:\n%s", want, yaml)
		}
	}
	for _, want := range []string{"[unix_http_server]", "dropped", "approximated"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}

	addr := freeAddr(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	r := startPodvisor(t, yaml, withHTTP(), withEnv("WEB_PORT="+port))
	waitReady(t, r, 20*time.Second)
	// startsecs=1 means "running for a second", not "listening": on a busy
	// machine python3 may bind its port later, so wait for the page.
	var code int
	var body string
	eventually(t, 20*time.Second, func() bool {
		code, body = fetch("http://" + addr + "/")
		return code == 200
	}, "web program: GET / = %s %q, want the page from its directory", ffLazy(func() string { return fmt.Sprint(code) }), ffLazy(func() string { return body }))
	if !strings.Contains(body, "hello from the web program") {
		t.Fatalf("web program: GET / = %d %q, want the page from its directory", code, body)
	}
	r.WaitEvent(t, "worker-0", "up", 10*time.Second)
	r.WaitEvent(t, "worker-1", "up", 10*time.Second)
	// stdout_logfile became each copy's log file; web's /dev/stdout stays
	// on podvisor's output.
	for _, n := range []string{"0", "1"} {
		logPath := filepath.Join(src, "logs", "worker-"+n+".log")
		eventually(t, 10*time.Second, func() bool {
			b, _ := os.ReadFile(logPath)
			return strings.Contains(string(b), "worker-"+n+" writes to its log")
		}, "%s does not hold worker-%s's output; podvisor output:\n%s", logPath, n, r.Stdout)
	}
	if r.Stdout.Contains("writes to its log") {
		t.Errorf("a worker's output reached podvisor's stdout instead of its log file:\n%s", r.Stdout)
	}
	st := ffGetStatus(t, r)
	for _, name := range []string{"web", "worker-0", "worker-1"} {
		if p := st.proc(name); p.State != "running" || !p.Ready {
			t.Errorf("%s: state %s ready %v, want running and ready", name, p.State, p.Ready)
		}
	}
	teardown(t, r, addr, eventPids(t, r, [2]string{"worker-0", "up"}, [2]string{"worker-1", "up"}))
}

// TestImportS6OneshotBeforeLongrun converts an s6-overlay v3 tree where a
// oneshot prepares what a longrun serves, and runs it: the page exists
// only if the oneshot completed before the longrun started.
func TestImportS6OneshotBeforeLongrun(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	root := t.TempDir()
	rc := "etc/s6-overlay/s6-rc.d/"
	writeFiles(t, root, map[string]string{
		rc + "init-site/type":                   "oneshot\n",
		rc + "init-site/up":                     filepath.Join(root, "etc/s6-overlay/scripts/init-site") + "\n",
		rc + "init-site/dependencies.d/base":    "",
		rc + "svc-web/type":                     "longrun\n",
		rc + "svc-web/dependencies.d/init-site": "",
		rc + "svc-web/dependencies.d/base":      "",
		rc + "svc-web/timeout-down":             "5000\n",
		rc + "user/type":                        "bundle\n",
		rc + "user/contents.d/svc-web":          "",
		rc + "user/contents.d/init-site":        "",
		"etc/s6-overlay/scripts/init-site": `#!/command/with-contenv sh
mkdir -p "$E2E_DIR/site"
echo "built by init-site" > "$E2E_DIR/site/index.html"
echo "init-site done $(date +%s%N) $$" >> "$E2E_EVENTS"
`,
		rc + "svc-web/run": `#!/usr/bin/with-contenv sh
echo "svc-web start $(date +%s%N) $$" >> "$E2E_EVENTS"
cd "$E2E_DIR/site" || exit 1
exec python3 -m http.server --bind 127.0.0.1 "$WEB_PORT"
`,
	})
	yaml, _ := runImport(t, "--from", "s6", filepath.Join(root, "etc/s6-overlay/s6-rc.d"))
	if !strings.Contains(yaml, "init-site: completed") {
		t.Fatalf("svc-web does not wait for init-site to complete:\n%s", yaml)
	}
	addr := freeAddr(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	r := startPodvisor(t, yaml, withHTTP(), withEnv("WEB_PORT="+port))
	waitReady(t, r, 20*time.Second)
	done := r.WaitEvent(t, "init-site", "done", 10*time.Second)
	start := r.WaitEvent(t, "svc-web", "start", 10*time.Second)
	if !start.At.After(done.At) {
		t.Errorf("svc-web started at %v, before init-site completed at %v", start.At, done.At)
	}
	eventually(t, 10*time.Second, func() bool {
		code, body := fetch("http://" + addr + "/")
		return code == 200 && strings.Contains(body, "built by init-site")
	}, "svc-web does not serve the page init-site built; output:\n%s", r.Stdout)
	if p := ffGetStatus(t, r).proc("init-site"); p.State != "completed" {
		t.Errorf("init-site is %s, want completed", p.State)
	}
	teardown(t, r, addr, eventPids(t, r, [2]string{"svc-web", "start"}))
}

// TestImportProcessComposeHealthGated converts a process-compose file
// whose migrate step waits for the database's health check and whose app
// waits for both, and runs it. migrate fails (and, with restart "no", the
// whole run) if it starts before the database answers.
func TestImportProcessComposeHealthGated(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"process-compose.yaml": fmt.Sprintf(`version: "0.5"
environment:
  - "GREETING=hello"
processes:
  db:
    command: "sleep 1; exec python3 -m http.server --bind 127.0.0.1 ${DB_PORT}"
    readiness_probe:
      http_get:
        host: 127.0.0.1
        port: ${DB_PORT}
        path: /
      period_seconds: 1
      timeout_seconds: 1
    availability:
      restart: always
  migrate:
    command: "python3 -c 'import os, urllib.request; urllib.request.urlopen(\"http://127.0.0.1:\" + os.environ[\"DB_PORT\"] + \"/\")' && %s"
    depends_on:
      db:
        condition: process_healthy
    availability:
      restart: "no"
  seed:
    command: "echo seeded"
  app:
    command: "%s; echo \"[$GREETING]\"; echo \"$$GREETING, app ready\"; trap 'exit 0' TERM; while :; do sleep 0.1; done"
    depends_on:
      db:
        condition: process_healthy
      migrate:
        condition: process_completed_successfully
    ready_log_line: "app ready"
    availability:
      restart: always
    shutdown:
      signal: 15
      timeout_seconds: 5
`, strings.ReplaceAll(ev("migrate", "done"), `"`, `\"`), strings.ReplaceAll(ev("app", "start"), `"`, `\"`))})
	yaml, _ := runImport(t, filepath.Join(dir, "process-compose.yaml"))
	for _, want := range []string{"db: ready", "migrate: completed", "log: \"app ready\""} {
		if !strings.Contains(yaml, want) {
			t.Errorf("procs.yaml lacks %q:\n%s", want, yaml)
		}
	}
	addr := freeAddr(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	r := startPodvisor(t, yaml, withHTTP(), withEnv("DB_PORT="+port))
	waitReady(t, r, 30*time.Second)
	migrated := r.WaitEvent(t, "migrate", "done", 10*time.Second)
	app := r.WaitEvent(t, "app", "start", 10*time.Second)
	if !app.At.After(migrated.At) {
		t.Errorf("app started at %v, before migrate completed at %v", app.At, migrated.At)
	}
	st := ffGetStatus(t, r)
	if db := st.proc("db"); db.ReadyAt == nil || db.ReadyAt.After(migrated.At) {
		t.Errorf("db ready at %v, migrate done at %v: migrate did not wait for db's health", db.ReadyAt, migrated.At)
	}
	if p := st.proc("app"); p.State != "running" || !p.Ready {
		t.Errorf("app: state %s ready %v, want running and ready (its log line)", p.State, p.Ready)
	}
	// A process without availability that ended: process-compose lets it
	// not hold the project back; podvisor keeps it completed and ready, and
	// the pod ready (issue 35 item 2: 503 "seed (stopped)" for good).
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { p := s.proc("seed"); return p.State == "completed" && p.Ready }, "seed completed and ready")
	if code, body := r.Get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz %d %q after seed completed, want 200", code, body)
	}
	if !r.Stdout.Contains("hello, app ready") {
		t.Errorf("the top-level environment did not reach app ($$GREETING, left to the shell); output:\n%s", r.Stdout)
	}
	// process-compose puts $GREETING in when it loads the file, from its
	// own environment, where the file's environment: is not: empty.
	if !r.Stdout.Contains("| []") {
		t.Errorf("$GREETING was not put in at load as process-compose does (want it empty); output:\n%s", r.Stdout)
	}
	teardown(t, r, addr, eventPids(t, r, [2]string{"app", "start"}))
}

// importAndRun writes the files files(dir) returns into a new directory
// dir, imports input under it and starts podvisor on the result.
func importAndRun(t *testing.T, files func(dir string) map[string]string, input ...string) (*Run, string, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files(dir))
	yaml, _ := runImport(t, filepath.Join(append([]string{dir}, input...)...))
	return startPodvisor(t, yaml, withHTTP()), yaml, dir
}

// waitFileHolds waits until file (a stand-in's output) holds want,
// blanks around it aside; what names the file in the failure.
func waitFileHolds(t *testing.T, file, want, what string) {
	t.Helper()
	var got string
	eventually(t, 20*time.Second, func() bool {
		b, _ := os.ReadFile(file)
		got = strings.TrimSpace(string(b))
		return got == want
	}, "%s holds %q, want %q", what, ffLazy(func() string { return got }), want)
}

// stopClean sends SIGTERM and expects exit 0.
func stopClean(t *testing.T, r *Run) {
	t.Helper()
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
	}
}

// TestImportSystemdEnvironmentOrder converts a unit whose EnvironmentFile=
// and Environment= set the same variable and whose ExecStartPre= reads the
// unit's environment in its working directory: systemd.exec(5) lets the
// file win, and runs every Exec*= line with the unit's environment and
// directory. Both stand-ins write what they see.
func TestImportSystemdEnvironmentOrder(t *testing.T) {
	r, _, dir := importAndRun(t, func(dir string) map[string]string {
		return map[string]string{
			"relay.env": "# read at start\nRELAY_MODE=mirror\n",
			"wd/.keep":  "",
			"bin/pre":   "#!/bin/sh\necho \"pre $RELAY_MODE $GREETING $(pwd)\" > \"$E2E_DIR/pre.out\"\n",
			"bin/main":  "#!/bin/sh\necho \"main $RELAY_MODE $GREETING $1\" > \"$E2E_DIR/main.out\"\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
			"units/relay.service": fmt.Sprintf(`[Unit]
	Description=relay

	[Service]
	Environment=RELAY_MODE=fanout GREETING=hello
	Environment=GREETING=hi
	EnvironmentFile=%[1]s/relay.env
	WorkingDirectory=%[1]s/wd
	ExecStartPre=%[1]s/bin/pre
	ExecStart=%[1]s/bin/main %%n
	TimeoutStopSec=5
	`, dir),
		}
	}, "units")
	want := map[string]string{
		filepath.Join(r.Dir, "pre.out"):  "pre mirror hi " + filepath.Join(dir, "wd"),
		filepath.Join(r.Dir, "main.out"): "main mirror hi relay.service",
	}
	for file, w := range want {
		waitFileHolds(t, file, w, file)
	}
	stopClean(t, r)
}

// TestImportSystemdExitStatusRules converts RestartForceExitStatus= (a
// restart despite Restart=no) and RestartPreventExitStatus= (no restart
// despite Restart=always) and runs them: the first unit's exit 75 is
// restarted, the second's exit 78 leaves it stopped and the run up.
func TestImportSystemdExitStatusRules(t *testing.T) {
	r, _, _ := importAndRun(t, func(dir string) map[string]string {
		return map[string]string{
			"bin/flaky":           "#!/bin/sh\necho run >> \"$E2E_DIR/flaky.runs\"\n[ \"$(wc -l < \"$E2E_DIR/flaky.runs\")\" -ge 2 ] || exit 75\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
			"bin/once":            "#!/bin/sh\necho run >> \"$E2E_DIR/once.runs\"\nexit 78\n",
			"units/flaky.service": fmt.Sprintf("[Service]\nExecStart=%s/bin/flaky\nRestart=no\nRestartSec=100ms\nRestartForceExitStatus=75\nTimeoutStopSec=5\n", dir),
			"units/once.service":  fmt.Sprintf("[Service]\nExecStart=%s/bin/once\nRestart=always\nRestartSec=100ms\nRestartPreventExitStatus=78\n", dir),
		}
	}, "units")
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
		p := s.proc("flaky")
		return p.State == "running" && p.Restarts == 1
	}, "flaky restarted once after exit 75 and running")
	st := ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
		p := s.proc("once")
		return p.State == "stopped" && p.ExitCode != nil && *p.ExitCode == 78
	}, "once stopped with exit 78")
	if p := st.proc("once"); p.Restarts != 0 {
		t.Errorf("once restarted %d times after exit 78, want none", p.Restarts)
	}
	if n := strings.Count(readFile(filepath.Join(r.Dir, "once.runs")), "run"); n != 1 {
		t.Errorf("once ran %d times, want 1", n)
	}
	stopClean(t, r)
}

// TestImportSystemdTemplateInstance imports queue@mail-in.service from
// the template queue@.service: the specifiers in the command, the
// environment and the working directory take the instance (%i as written,
// %I unescaped: "-" is "/").
func TestImportSystemdTemplateInstance(t *testing.T) {
	r, _, dir := importAndRun(t, func(dir string) map[string]string {
		return map[string]string{
			"spool/mail-in/.keep": "",
			"bin/show":            "#!/bin/sh\necho \"$* $Q $(pwd)\" > \"$E2E_DIR/show.out\"\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
			"units/queue@.service": fmt.Sprintf(`[Service]
	ExecStart=%[1]s/bin/show %%i %%I %%p %%n 100%%%%
	Environment=Q=%%I
	WorkingDirectory=%[1]s/spool/%%i
	TimeoutStopSec=5
	`, dir),
		}
	}, "units", "queue@mail-in.service")
	want := "mail-in mail/in queue queue@mail-in.service 100% mail/in " + filepath.Join(dir, "spool", "mail-in")
	waitFileHolds(t, filepath.Join(r.Dir, "show.out"), want, "what the instance saw")
	stopClean(t, r)
}

// TestImportProcfilePortEveryProcess runs a Procfile whose lines do not
// name PORT: foreman gives every process type one anyway, 5000 and then
// 100 more per line.
func TestImportProcfilePortEveryProcess(t *testing.T) {
	dir := t.TempDir()
	show := "#!/bin/sh\necho \"$1 $PORT\" > \"$E2E_DIR/$1.port\"\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n"
	writeFiles(t, dir, map[string]string{
		"bin/show": show,
		"Procfile": fmt.Sprintf("web: %[1]s/bin/show web\nworker: %[1]s/bin/show worker\n", dir),
	})
	yaml, _ := runImport(t, filepath.Join(dir, "Procfile"))
	r := startPodvisor(t, yaml, withHTTP())
	for name, want := range map[string]string{"web": "web 5000", "worker": "worker 5100"} {
		waitFileHolds(t, filepath.Join(r.Dir, name+".port"), want, "what "+name+" saw")
	}
	stopClean(t, r)
}

// TestImportRootStaysInside imports a unit with --root: its
// EnvironmentFile= is read from the image (the variable it sets leaves
// env), and a file that is a symbolic link out of the image is refused
// with an error naming it (exit 1).
func TestImportRootStaysInside(t *testing.T) {
	dir := t.TempDir()
	unit := "[Service]\nEnvironment=MODE=unit\nEnvironmentFile=/etc/app/app.env\nExecStart=/usr/bin/app\n"
	writeFiles(t, dir, map[string]string{
		"good/etc/app/app.env":         "MODE=image\n",
		"good/etc/systemd/app.service": unit,
		"bad/etc/systemd/app.service":  unit,
		"outside.env":                  "MODE=host\n",
	})
	if err := os.MkdirAll(filepath.Join(dir, "bad/etc/app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../outside.env", filepath.Join(dir, "bad/etc/app/app.env")); err != nil {
		t.Fatal(err)
	}
	yaml, _ := runImport(t, "--root", filepath.Join(dir, "good"), filepath.Join(dir, "good/etc/systemd/app.service"))
	if strings.Contains(yaml, "MODE:") || !strings.Contains(yaml, "sets MODE (from /etc/app/app.env)") {
		t.Errorf("MODE from the image's file did not override Environment=:\n%s", yaml)
	}
	cmd := exec.Command(podvisorBin, "import", "--root", filepath.Join(dir, "bad"), filepath.Join(dir, "bad/etc/systemd/app.service"))
	out, err := cmd.CombinedOutput()
	if code := exitCode(cmd.ProcessState, err); code != 1 || !strings.Contains(string(out), "/etc/app/app.env: leads outside --root") {
		t.Errorf("import of an escaping EnvironmentFile=: exit %d, output:\n%s\nwant exit 1 naming the path", code, out)
	}
}

// TestImportSystemdSocketActivation converts a .socket unit and the
// service it activates: podvisor binds the address before the start and
// passes it as fd 3 with LISTEN_FDS, as systemd does; the stand-in answers
// on the inherited fd only.
func TestImportSystemdSocketActivation(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFiles(t, dir, map[string]string{
		"bin/serve": `#!/usr/bin/env python3
import os, socket
assert os.environ["LISTEN_FDS"] == "1", os.environ.get("LISTEN_FDS")
s = socket.socket(fileno=3)
with open(os.path.join(os.environ["E2E_DIR"], "serve.out"), "w") as f:
    f.write("fds %s names %s\n" % (os.environ["LISTEN_FDS"], os.environ.get("LISTEN_FDNAMES")))
while True:
    c, _ = s.accept()
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 9\r\n\r\nactivated")
    c.close()
`,
		"units/web.socket":  "[Socket]\nListenStream=" + addr + "\nFileDescriptorName=http\n\n[Install]\nWantedBy=sockets.target\n",
		"units/web.service": fmt.Sprintf("[Service]\nExecStart=%s/bin/serve\nTimeoutStopSec=5\n", dir),
	})
	yaml, _ := runImport(t, filepath.Join(dir, "units"))
	if !strings.Contains(yaml, "tcp://"+addr) {
		t.Fatalf("web has no socket on %s:\n%s", addr, yaml)
	}
	r := startPodvisor(t, yaml, withHTTP())
	var code int
	var body string
	eventually(t, 20*time.Second, func() bool {
		code, body = fetch("http://" + addr + "/")
		return code == 200 && body == "activated"
	}, "GET %s = %s %q, want the stand-in's answer on the passed socket", addr, ffLazy(func() string { return fmt.Sprint(code) }), ffLazy(func() string { return body }))
	if got := strings.TrimSpace(readFile(filepath.Join(r.Dir, "serve.out"))); got != "fds 1 names http" {
		t.Errorf("the stand-in saw %q, want fds 1 names http", got)
	}
	stopClean(t, r)
}

// TestImportSystemdRemainAfterExitStop converts a Type=oneshot unit with
// RemainAfterExit=yes and ExecStop=: systemd runs ExecStop= when the
// unit, active after its exit, is stopped; podvisor runs the completed
// oneshot's stop.command at teardown.
func TestImportSystemdRemainAfterExitStop(t *testing.T) {
	r, _, _ := importAndRun(t, func(dir string) map[string]string {
		return map[string]string{
			"bin/mount":          "#!/bin/sh\necho up > \"$E2E_DIR/state\"\n",
			"bin/umount":         "#!/bin/sh\necho down >> \"$E2E_DIR/state\"\n",
			"bin/app":            "#!/bin/sh\necho app > \"$E2E_DIR/app.out\"\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
			"units/data.service": fmt.Sprintf("[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%[1]s/bin/mount\nExecStop=%[1]s/bin/umount\n", dir),
			"units/app.service":  fmt.Sprintf("[Unit]\nAfter=data.service\nRequires=data.service\n\n[Service]\nExecStart=%s/bin/app\nTimeoutStopSec=5\n", dir),
		}
	}, "units")
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
		return s.proc("data").State == "completed" && s.proc("app").State == "running"
	}, "data completed and app running")
	if got := readFile(filepath.Join(r.Dir, "state")); got != "up\n" {
		t.Fatalf("state %q before teardown, want up only", got)
	}
	stopClean(t, r)
	if got := readFile(filepath.Join(r.Dir, "state")); got != "up\ndown\n" {
		t.Errorf("state %q after teardown, want up then down (ExecStop= ran)", got)
	}
}

// svSeeScript is a stand-in program: it writes the words it was given,
// its working directory and $MODE to $OUT/$NAME, and exits 0.
const svSeeScript = `#!/bin/sh
{ for a in "$@"; do printf 'arg=%s\n' "$a"; done; printf 'pwd=%s\nmode=%s\n' "$(/bin/pwd)" "$MODE"; } > "$OUT/$NAME.tmp"
mv "$OUT/$NAME.tmp" "$OUT/$NAME"
`

// TestImportSupervisordExpansions runs one supervisord config under the
// real supervisord and, imported, under podvisor, with the same
// environment, and compares what each program saw: %(ENV_X)s in command=
// is split into words after expansion (SERVE_ARGS holds three words),
// values set by [supervisord] environment= expand in the programs'
// fields, and %(program_name)s, %(process_num)d, %(here)s expand in
// command, directory and environment.
func TestImportSupervisordExpansions(t *testing.T) {
	sv, src := needSupervisord(t), t.TempDir()
	writeFiles(t, src, map[string]string{
		"see": svSeeScript,
		"supervisord.conf": `[supervisord]
nodaemon=true
logfile=%(here)s/supervisord.log
pidfile=%(here)s/supervisord.pid
environment=TOOL="%(here)s/see queue  --from-file"

[program:web]
command=%(ENV_SEE)s %(ENV_SERVE_ARGS)s --name "%(program_name)s 'x'"
directory=%(ENV_APP_HOME)s
environment=OUT="%(ENV_OUT_DIR)s",NAME="%(program_name)s",MODE="%(ENV_APP_MODE)s-1"
startsecs=0
autorestart=false

[program:queue]
process_name=q%(process_num)d
numprocs=2
command=%(ENV_TOOL)s --n=%(process_num)02d
directory=%(here)s/q%(process_num)d
environment=OUT="%(ENV_OUT_DIR)s",NAME="%(program_name)s-%(process_num)d",MODE="%(ENV_APP_MODE)s"
startsecs=0
autorestart=false
`,
		"app/.keep": "", "q0/.keep": "", "q1/.keep": "",
	})
	env := []string{"SEE=" + filepath.Join(src, "see"), "SERVE_ARGS=artisan serve  --port=8000",
		"APP_HOME=" + filepath.Join(src, "app"), "APP_MODE=prod"}
	names := []string{"web", "queue-0", "queue-1"}
	seen := func(out string) map[string]string {
		m := map[string]string{}
		for _, n := range names {
			m[n] = readFile(filepath.Join(out, n))
		}
		return m
	}
	allThere := func(out string) bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(out, n)); err != nil {
				return false
			}
		}
		return true
	}

	svOut := filepath.Join(src, "sv-out")
	if err := os.Mkdir(svOut, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sv, "-n", "-c", filepath.Join(src, "supervisord.conf"))
	cmd.Env = append(os.Environ(), append(env, "OUT_DIR="+svOut)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool { return allThere(svOut) }, "supervisord's programs did not all write %s; its log:\n%s", svOut, ffLazy(func() string { return readFile(filepath.Join(src, "supervisord.log")) }))
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	want := seen(svOut)
	if !strings.Contains(want["web"], "arg=artisan\narg=serve\narg=--port=8000\n") {
		t.Fatalf("supervisord itself did not split SERVE_ARGS into words (the reference changed?):\n%s", want["web"])
	}

	yaml, _ := runImport(t, filepath.Join(src, "supervisord.conf"))
	pvOut := filepath.Join(src, "pv-out")
	if err := os.Mkdir(pvOut, 0o755); err != nil {
		t.Fatal(err)
	}
	r := startPodvisor(t, yaml, withEnv(append(env, "OUT_DIR="+pvOut)...))
	eventually(t, 30*time.Second, func() bool { return allThere(pvOut) }, "the imported programs did not all write %s; podvisor output:\n%s\nstderr:\n%s\nprocs.yaml:\n%s", pvOut, r.Stdout, r.Stderr, yaml)
	got := seen(pvOut)
	for _, n := range names {
		if got[n] != want[n] {
			t.Errorf("%s saw under podvisor:\n%s\nunder supervisord:\n%s\nprocs.yaml:\n%s", n, got[n], want[n], yaml)
		}
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
}

// TestImportSupervisordStopListener runs a config whose event listener
// kills supervisord when any program exits, under the real supervisord and
// imported under podvisor: in both the run ends by itself once one
// program exits (code 3), and the other program (long-running) is gone.
func TestImportSupervisordStopListener(t *testing.T) {
	sv, src := needSupervisord(t), t.TempDir()
	writeFiles(t, src, map[string]string{
		// long: records its pid and waits for its stop; quits: exits 3
		// once long is up, so the listener is there to see it.
		"long":  "#!/bin/sh\necho $$ > \"$OUT/long.pid.tmp\" && mv \"$OUT/long.pid.tmp\" \"$OUT/long.pid\"\nexec sleep 600\n",
		"quits": "#!/bin/sh\nwhile [ ! -e \"$OUT/long.pid\" ]; do sleep 0.05; done\nexit 3\n",
		"supervisord.conf": `[supervisord]
nodaemon=true
logfile=%(here)s/supervisord.log
pidfile=%(here)s/supervisord.pid

[program:long]
command=%(here)s/long
environment=OUT="%(ENV_OUT_DIR)s"
startsecs=0

[program:quits]
command=%(here)s/quits
environment=OUT="%(ENV_OUT_DIR)s"
startsecs=0
autorestart=true

[eventlistener:exit-on-death]
command=sh -c "printf 'READY\n' && while read line; do kill -TERM $PPID; done"
events=PROCESS_STATE_EXITED
`,
	})
	endsAlone := func(t *testing.T, out string, wait func() int, what string) {
		t.Helper()
		code := wait()
		b, err := os.ReadFile(filepath.Join(out, "long.pid"))
		if err != nil {
			t.Fatalf("%s: long never ran: %v", what, err)
		}
		var pid int
		fmt.Sscan(string(b), &pid)
		eventually(t, 10*time.Second, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) },
			"%s ended (code %d) but long (pid %d) is still there", what, code, pid)
	}

	svOut := filepath.Join(src, "sv-out")
	if err := os.Mkdir(svOut, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sv, "-n", "-c", filepath.Join(src, "supervisord.conf"))
	cmd.Env = append(os.Environ(), "OUT_DIR="+svOut)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	endsAlone(t, svOut, func() int {
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("supervisord did not end after quits exited; its log:\n%s", readFile(filepath.Join(src, "supervisord.log")))
		}
		return cmd.ProcessState.ExitCode()
	}, "supervisord")

	yaml, report := runImport(t, filepath.Join(src, "supervisord.conf"))
	if !strings.Contains(report, "[eventlistener:exit-on-death]: on PROCESS_STATE_EXITED") {
		t.Errorf("the report does not say how the listener converted:\n%s", report)
	}
	pvOut := filepath.Join(src, "pv-out")
	if err := os.Mkdir(pvOut, 0o755); err != nil {
		t.Fatal(err)
	}
	r := startPodvisor(t, yaml, withEnv("OUT_DIR="+pvOut))
	endsAlone(t, pvOut, func() int {
		code, _ := r.Wait(60 * time.Second)
		if code != 3 {
			t.Errorf("podvisor exit code %d, want 3 (quits's code: rule action shutdown); stderr:\n%s\nprocs.yaml:\n%s", code, r.Stderr, yaml)
		}
		return code
	}, "podvisor")
}

// TestImportProcessComposeVarsAndEnv converts a process-compose file that
// relies on its load-time substitution ($VAR as well as ${VAR}, from the
// environment) and on Go-template vars (file level, overridden per
// process, PC_REPLICA_NUM), runs it, and checks the words and environment
// each process saw: what process-compose would have given it.
func TestImportProcessComposeVarsAndEnv(t *testing.T) {
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"see": svSeeScript,
		"process-compose.yaml": `version: "0.5"
vars:
  PORT: 8080
  QUEUE: mail
processes:
  api:
    vars:
      PORT: 9090
    command: "$SEE serve --port {{.PORT}} --replica {{ .PC_REPLICA_NUM }}"
    working_dir: "$APP_HOME"
    environment:
      - "OUT=$OUT_DIR"
      - "NAME=api"
      - "MODE=$APP_MODE-{{.QUEUE}}"
  worker:
    command: "${SEE} work --queue={{.QUEUE}} --port={{.PORT}}"
    replicas: 2
    working_dir: "${APP_HOME}"
    environment:
      - "OUT=${OUT_DIR}"
      - "NAME=worker-{{.PC_REPLICA_NUM}}"
      - "MODE=$APP_MODE"
`,
	})
	out := filepath.Join(src, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml, _ := runImport(t, filepath.Join(src, "process-compose.yaml"))
	r := startPodvisor(t, yaml, withEnv("SEE="+filepath.Join(src, "see"), "APP_HOME="+src, "APP_MODE=prod", "OUT_DIR="+out))
	want := map[string]string{
		"api":      "arg=serve\narg=--port\narg=9090\narg=--replica\narg=0\npwd=" + src + "\nmode=prod-mail\n",
		"worker-0": "arg=work\narg=--queue=mail\narg=--port=8080\npwd=" + src + "\nmode=prod\n",
		"worker-1": "arg=work\narg=--queue=mail\narg=--port=8080\npwd=" + src + "\nmode=prod\n",
	}
	checkSeenAsProcessCompose(t, r, out, yaml, want)
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
}

// TestImportProcessComposeSuccessCodesAndDisabled converts a file where a
// migration lists only 3 in success_exit_codes and exits 0, an
// environment: key is empty and one process is disabled, and runs it: as
// under process-compose, exit 0 is still a success (the web process
// starts after it, the run goes on), and the disabled process never runs.
func TestImportProcessComposeSuccessCodesAndDisabled(t *testing.T) {
	src := t.TempDir()
	out := filepath.Join(src, "out")
	writeFiles(t, src, map[string]string{
		"process-compose.yaml": `processes:
  migrate:
    command: "echo migrated > ` + out + `/migrate"
    success_exit_codes: [3]
    environment:
  web:
    command: "echo started > ` + out + `/web.tmp && mv ` + out + `/web.tmp ` + out + `/web && exec sleep 600"
    environment: []
    depends_on:
      migrate:
        condition: process_completed_successfully
  debug-ui:
    command: "echo ran > ` + out + `/debug-ui"
    disabled: true
`,
	})
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml, report := runImport(t, filepath.Join(src, "process-compose.yaml"))
	if !strings.Contains(report, "debug-ui.disabled (profiles: [disabled]") {
		t.Errorf("the report does not say the disabled process is kept out of podvisor run:\n%s", report)
	}
	r := startPodvisor(t, yaml)
	eventually(t, 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(out, "web"))
		return err == nil
	}, "web never started after migrate exited 0; stderr:\n%s\nprocs.yaml:\n%s", r.Stderr, yaml)
	if r.Exited() {
		t.Fatalf("podvisor ended although migrate's exit 0 is a success; stderr:\n%s", r.Stderr)
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "debug-ui")); err == nil {
		t.Errorf("the disabled process ran")
	}
}

// needSupervisord returns the path of the real supervisord, or skips.
func needSupervisord(t *testing.T) string {
	t.Helper()
	sv, err := exec.LookPath("supervisord")
	if err != nil {
		t.Skip("supervisord not found (scripts/deps.sh supervisor)")
	}
	return sv
}

// TestImportProcessComposeDotenv converts a process-compose file whose
// variables come from the .env beside it, and runs it with podvisor's
// environment setting one of them: as under process-compose (which loads
// .env without overriding its environment, expands the file, and hands its
// environment to the processes), the environment's APP_MODE wins over the
// .env's, the .env's QUEUE is two words in the command, the file's own
// environment: (LEVEL) wins over the .env, and a process's shell sees the
// .env's variables.
func TestImportProcessComposeDotenv(t *testing.T) {
	src := t.TempDir()
	out := filepath.Join(src, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, src, map[string]string{
		"see":  svSeeScript,
		".env": "SEE=" + filepath.Join(src, "see") + "\nOUT=" + out + "\nQUEUE=\"mail jobs\"\nAPP_MODE=dev\nLEVEL=dotenv\n",
		"process-compose.yaml": `version: "0.5"
environment:
  - "LEVEL=file"
processes:
  worker:
    command: "${SEE} --queue ${QUEUE} --level $$LEVEL"
    environment:
      - "NAME=worker"
      - "MODE=${APP_MODE}"
  shell:
    command: "NAME=shell MODE=$$APP_MODE-$$QUEUE $$SEE"
`,
	})
	yaml, _ := runImport(t, filepath.Join(src, "process-compose.yaml"))
	r := startPodvisor(t, yaml, withEnv("APP_MODE=prod"))
	want := map[string]string{
		// MODE=${APP_MODE}: the .env's dev, which process-compose's
		// loader takes before its environment's prod
		"worker": "arg=--queue\narg=mail\narg=jobs\narg=--level\narg=file\nmode=dev\n",
		"shell":  "mode=prod-mail jobs\n",
	}
	for name, w := range want {
		eventually(t, 30*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(out, name))
			return err == nil
		}, "%s wrote nothing; podvisor stderr:\n%s\nprocs.yaml:\n%s", name, r.Stderr, yaml)
		// pwd= is podvisor's directory (the file sets no working_dir).
		got := regexp.MustCompile(`(?m)^pwd=.*\n`).ReplaceAllString(readFile(filepath.Join(out, name)), "")
		if got != w {
			t.Errorf("%s saw:\n%s\nwant (as under process-compose):\n%s\nprocs.yaml:\n%s", name, got, w, yaml)
		}
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
}

// checkSeenAsProcessCompose waits for each stand-in of want to write what
// it saw into out, and compares it with what process-compose would give it.
func checkSeenAsProcessCompose(t *testing.T, r *Run, out, yaml string, want map[string]string) {
	t.Helper()
	for name, w := range want {
		eventually(t, 30*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(out, name))
			return err == nil
		}, "%s wrote nothing; podvisor stderr:\n%s\nprocs.yaml:\n%s", name, r.Stderr, yaml)
		if got := readFile(filepath.Join(out, name)); got != w {
			t.Errorf("%s saw:\n%s\nwant (as under process-compose):\n%s\nprocs.yaml:\n%s", name, got, w, yaml)
		}
	}
}
