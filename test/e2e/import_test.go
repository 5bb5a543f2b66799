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
    command: "%s; echo \"$GREETING, app ready\"; trap 'exit 0' TERM; while :; do sleep 0.1; done"
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
		t.Errorf("the top-level environment did not reach app; output:\n%s", r.Stdout)
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
