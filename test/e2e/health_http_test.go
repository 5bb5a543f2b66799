package e2e

// Black-box tests of readiness, liveness and the HTTP endpoints of
// `podvisor run` (SPEC sections 2-4; FAULTS §3.C, C10, C13, D11, D13, D14,
// E2, E4), plus the `wait` and `status` subcommands that talk to a running
// podvisor.
//
// Ordering claims ("the dependent started after readiness") are checked on
// event-file timestamps written by the children themselves: the gated
// process writes its event just before it becomes ready, so a dependent that
// starts early has an earlier timestamp. Helpers of this file are prefixed
// hh so they cannot collide with the shared harness.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// ---- helpers ----

// hhTestdata is the absolute path of a file in testdata (children run in
// another directory).
func hhTestdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// hhStartHTTP starts podvisor listening on a free 127.0.0.1 address that its
// children also find in $E2E_ADDR. (withHTTP lets podvisor pick the port,
// which is too late for the children's environment.)
func hhStartHTTP(t testing.TB, yaml string, opts ...option) *Run {
	t.Helper()
	addr := freeAddr(t)
	opts = append([]option{withArgs("--listen", addr), withEnv("E2E_ADDR=" + addr)}, opts...)
	r := startPodvisor(t, yaml, opts...)
	r.Addr = addr
	r.Stdout.WaitFor(t, `msg="serving `, 10*time.Second)
	return r
}

// hhLazy formats as the string its function returns when the message is
// printed: eventually's message arguments are evaluated before it polls, so
// this is how a timeout message shows the last state seen.
type hhLazy func() string

func (f hhLazy) String() string { return f() }

// hhPort is the port of a host:port address.
func hhPort(t testing.TB, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// hhProc is one process of the /status document.
type hhProc = testharness.ProcessStatus

// hhStatus is the /status document.
type hhStatus struct {
	testharness.Status
	raw string
}

// proc returns the named process, or a zero hhProc with State "absent".
func (s hhStatus) proc(name string) hhProc { return s.Process(name) }

// hhSpecProcessKeys are the per-process keys SPEC section 4 promises.
var hhSpecProcessKeys = []string{"name", "type", "state", "pid", "ready", "restarts", "exit_code", "started_at", "ready_at", "waiting_for"}

// hhGetStatus fetches and decodes /status, checking the keys SPEC promises
// are all present (null counts as present).
func hhGetStatus(t testing.TB, r *Run) hhStatus {
	t.Helper()
	var st hhStatus
	body := getJSON(t, r, "/status", &st)
	st.raw = body
	var raw struct {
		Phase     *string          `json:"phase"`
		Ready     *bool            `json:"ready"`
		Processes []map[string]any `json:"processes"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Phase == nil || raw.Ready == nil {
		t.Fatalf("/status lacks phase or ready: %s", body)
	}
	for _, p := range raw.Processes {
		for _, k := range hhSpecProcessKeys {
			if _, ok := p[k]; !ok {
				t.Fatalf("/status process %v lacks %q: %s", p["name"], k, body)
			}
		}
		if p["waiting_for"] == nil {
			t.Fatalf("/status process %v: waiting_for is null, want a list: %s", p["name"], body)
		}
	}
	return st
}

// hhMetrics fetches /metrics and returns every sample keyed by its series
// ("name{labels}" exactly as exposed) and the raw text.
func hhMetrics(t testing.TB, r *Run) (map[string]float64, string) {
	t.Helper()
	code, body := r.Get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("/metrics: bad sample line %q", line)
		}
		samples[line[:i]] = v
	}
	return samples, body
}

// hhRequest sends method to path and returns the status code and body.
func hhRequest(t testing.TB, r *Run, method, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaled(2*time.Second))
	defer cancel()
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader("x=1") // what a form post would send
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL(path), body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// hhCount counts the events name/what written so far.
func hhCount(t testing.TB, r *Run, name, what string) int {
	t.Helper()
	return len(filterEvents(r.ReadEvents(t), name, what))
}

// hhStopClean sends SIGTERM and expects a clean exit 0.
func hhStopClean(t testing.TB, r *Run) {
	t.Helper()
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(15 * time.Second); code != 0 {
		t.Fatalf("podvisor exit code %d after SIGTERM, want 0\n%s%s", code, r.Stdout, r.Stderr)
	}
}

// hhAlive reports whether pid exists and is not a zombie.
func hhAlive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.State != 'Z'
}

// hhPodvisor runs a podvisor subcommand (not `run`) and returns its exit
// code and output.
func hhPodvisor(t testing.TB, timeout time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaled(timeout))
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, podvisorBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("podvisor %s: still running after %v", strings.Join(args, " "), scaled(timeout))
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("podvisor %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// hhNotifyPy is a python3 one-liner that sends READY=1 to $NOTIFY_SOCKET over
// a unix datagram socket and then stays alive (podvisor accepts messages
// only from the process or its live descendants).
const hhNotifyPy = `exec python3 -c 'import os, socket, time; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b"READY=1", os.environ["NOTIFY_SOCKET"]); time.sleep(1000)'`

// ---- 1. readiness gating, one kind at a time ----

// TestReadinessGatesDependents runs, for each readiness kind, a process "dep"
// that writes a "dep ready" event right before it becomes ready, and a
// process "app" depending on it that writes "app start" when it starts: app
// must start after the event, never before (SPEC section 3, Start).
func TestReadinessGatesDependents(t *testing.T) {
	t.Parallel()
	server := hhTestdata(t, "health_server.py")
	// nl continues a block-scalar command on its next line.
	const nl = "\n      "

	cases := []struct {
		name string
		need string // a binary the case needs, skipped without it
		// dep returns the YAML body of process "dep" (indented 4 spaces);
		// addr is a free 127.0.0.1 address, port its port, stale a file
		// path that exists and is older than podvisor.
		dep func(addr, port, stale string) string
	}{
		{name: "http", dep: func(addr, port, _ string) string {
			// The port is bound only after the event (and Python's start).
			return `    command: 'sleep 0.5; ` + ev("dep", "ready") + `; exec python3 ` + server + ` ` + port + `'
    ready: {http: "http://` + addr + `/", start_interval: 50ms}`
		}},
		{name: "tcp", dep: func(addr, port, _ string) string {
			return `    command: 'sleep 0.3; ` + ev("dep", "ready") + `; exec python3 ` + server + ` ` + port + `'
    ready: {tcp: "` + addr + `", start_interval: 50ms}`
		}},
		{name: "exec", dep: func(_, _, _ string) string {
			return `    command: 'sleep 0.3; ` + ev("dep", "ready") + `; touch {{dir}}/flag; exec sleep 1000'
    ready: {exec: "test -f {{dir}}/flag", start_interval: 50ms}`
		}},
		{name: "file-stale", dep: func(_, _, stale string) string {
			// The file exists from "a previous run": only the new write
			// after the event may count.
			return `    command: 'sleep 0.3; ` + ev("dep", "ready") + `; touch ` + stale + `; exec sleep 1000'
    ready: {file: "` + stale + `", start_interval: 50ms}`
		}},
		{name: "log", dep: func(_, _, _ string) string {
			return `    command: |
      echo "starting up"
      echo "server not READY yet" >&2
      echo "server READY now, or is it"
      sleep 0.3` + nl + ev("dep", "ready") + `
      echo "server READY now"
      exec sleep 1000
    ready: {log: "^server READY now$"}`
		}},
		{name: "log-split-write", dep: func(_, _, _ string) string {
			// One line written in two pieces: only the whole line matches.
			return `    command: |
      printf 'rea'
      sleep 0.3` + nl + ev("dep", "ready") + `
      printf 'dy\n'
      exec sleep 1000
    ready: {log: "^ready$"}`
		}},
		{name: "notify-systemd-python", dep: func(_, _, _ string) string {
			return `    command: |
      sleep 0.3` + nl + ev("dep", "ready") + `
      ` + hhNotifyPy + `
    ready: {notify: systemd}`
		}},
		{name: "notify-systemd-notify", need: "/usr/bin/systemd-notify", dep: func(_, _, _ string) string {
			return `    command: 'sleep 0.3; ` + ev("dep", "ready") + `; systemd-notify --ready; exec sleep 1000'
    ready: {notify: systemd}`
		}},
		{name: "notify-fd3", dep: func(_, _, _ string) string {
			return `    command: 'sleep 0.3; ` + ev("dep", "ready") + `; echo >&3; exec sleep 1000'
    ready: {notify: "fd:3"}`
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.need != "" {
				if _, err := os.Stat(c.need); err != nil {
					t.Skipf("%s not installed", c.need)
				}
			}
			stale := filepath.Join(t.TempDir(), "dep.ready")
			if err := os.WriteFile(stale, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-2 * time.Second)
			if err := os.Chtimes(stale, old, old); err != nil {
				t.Fatal(err)
			}
			addr := freeAddr(t)
			yaml := `
shutdown_timeout: 5s
processes:
  dep:
` + c.dep(addr, hhPort(t, addr), stale) + `
  app:
    command: '` + ev("app", "start") + `; exec sleep 1000'
    depends_on: [dep]
`
			r := startPodvisor(t, yaml)
			app := r.WaitEvent(t, "app", "start", 10*time.Second)
			// dep writes its event before it becomes ready: without the
			// event at this point, app started too early.
			dep, ok := findEvent(r.ReadEvents(t), "dep", "ready")
			if !ok {
				t.Fatalf("app started before dep signalled readiness\n%s", r.Stdout)
			}
			if !app.At.After(dep.At) {
				t.Fatalf("app started at %v, %v before dep became ready\n%s",
					app.At.Format(time.StampMicro), dep.At.Sub(app.At), r.Stdout)
			}
			r.Stdout.WaitFor(t, `msg=ready process=dep`, time.Second)
			hhStopClean(t, r)
		})
	}
}

// TestNotifyFDClosedWithoutNewline: a process that closes its notify fd
// without writing a newline never becomes ready, and podvisor says why
// (FAULTS C10; s6 semantics).
func TestNotifyFDClosedWithoutNewline(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  dep:
    command: 'printf no-newline >&3; exec 3>&-; `+ev("dep", "closed")+`; exec sleep 1000'
    ready: {notify: "fd:3"}
  app:
    command: '`+ev("app", "start")+`; exec sleep 1000'
    depends_on: [dep]
`)
	r.WaitEvent(t, "dep", "closed", 5*time.Second)
	// podvisor reads EOF right away; give it a moment to (wrongly) decide.
	var st hhStatus
	deadline := time.Now().Add(eps())
	for time.Now().Before(deadline) {
		st = hhGetStatus(t, r)
		if d := st.proc("dep"); d.State != "starting" || d.Ready || st.Ready {
			t.Fatalf("dep ready or no longer starting after closing its notify fd without a newline: %s", st.raw)
		}
		time.Sleep(20 * time.Millisecond) // sampling period of a negative check, not synchronisation
	}
	if code, body := r.Get(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "dep") {
		t.Fatalf("/readyz %d %q, want 503 naming dep", code, body)
	}
	if hhCount(t, r, "app", "start") != 0 {
		t.Fatal("app started although dep never became ready")
	}
	says := strings.Contains(st.raw+r.Stdout.String(), "notify fd closed without readiness")
	hhStopClean(t, r)
	if !says {
		t.Fatal("neither /status nor the log says why dep is not ready (notify fd closed without readiness)")
	}
}

// ---- 2. liveness, flapping readiness, restart: true, start_timeout ----

// TestLivenessFailureRestarts runs a server that stops answering (requests
// hang) a second into its first run: the liveness check must stop it
// and restart it, the restart must show in /status and /metrics, and a
// dependent without restart: true must be left alone (FAULTS B21).
func TestLivenessFailureRestarts(t *testing.T) {
	t.Parallel()
	server := hhTestdata(t, "health_server.py")
	web := freeAddr(t)
	port := hhPort(t, web)
	// The start event carries the shell's pid ($$$$: the config turns $$ into
	// $), which exec hands on to the server.
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  web:
    command: 'echo "web start $(date +%s%N) $$$$" >> "$E2E_EVENTS"; exec python3 `+server+` `+port+` --hang-after 1 --marker {{dir}}/hung-once'
    ready: {http: "http://`+web+`/", start_interval: 50ms}
    live: {http: "http://`+web+`/", interval: 100ms, timeout: 200ms, failure_threshold: 2}
    restart: {policy: always, backoff: 100ms}
  app:
    command: '`+ev("app", "start")+`; exec sleep 1000'
    depends_on: [web]
`)
	var st hhStatus
	eventually(t, 15*time.Second, func() bool {
		st = hhGetStatus(t, r)
		w := st.proc("web")
		return w.Restarts == 1 && w.State == "running" && w.Ready && st.Ready
	}, "web was not restarted once and ready again; last status %s\n%s", hhLazy(func() string { return st.raw }), r.Stdout)
	r.Stdout.WaitFor(t, `liveness check failed: restarting.* process=web`, time.Second)

	starts := filterEvents(r.ReadEvents(t), "web", "start")
	if len(starts) != 2 {
		t.Fatalf("web started %d times, want 2", len(starts))
	}
	hung, err := strconv.Atoi(starts[0].Rest)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, func() bool { return !hhAlive(hung) }, "hung web pid %d still alive", hung)
	w := st.proc("web")
	if w.Pid == hung || strconv.Itoa(w.Pid) != starts[1].Rest {
		t.Fatalf("web pid %d, want the second incarnation %s (first was %d)", w.Pid, starts[1].Rest, hung)
	}
	// The hung server died of podvisor's SIGTERM.
	if w.ExitCode == nil || *w.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("web exit_code %v, want %d: %s", w.ExitCode, 128+int(syscall.SIGTERM), st.raw)
	}

	m, _ := hhMetrics(t, r)
	for series, want := range map[string]float64{
		`podvisor_process_restarts_total{process="web"}`: 1,
		`podvisor_process_last_exit_code{process="web"}`: 143,
		`podvisor_process_up{process="web"}`:             1,
		`podvisor_process_ready{process="web"}`:          1,
		`podvisor_process_restarts_total{process="app"}`: 0,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if f := m[`podvisor_probe_failures_total{probe="live",process="web"}`]; f < 2 {
		t.Errorf("live probe failures of web = %v, want >= 2 (failure_threshold)", f)
	}
	if n := hhCount(t, r, "app", "start"); n != 1 {
		t.Errorf("app started %d times: a liveness restart of its dependency must not restart it", n)
	}
	hhStopClean(t, r)
}

// TestFlappingReadiness toggles a process's readiness from the outside (its
// file check) twice: /readyz and the metrics must follow, and nothing may be
// stopped or restarted, neither the process nor its dependent (SPEC section
// 3, Readiness after start; FAULTS C11, B21).
func TestFlappingReadiness(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  db:
    command: '`+ev("db", "start")+`; exec sleep 1000'
    ready: {file: "{{dir}}/up", start_interval: 50ms, interval: 50ms, failure_threshold: 2}
  app:
    command: '`+ev("app", "start")+`; exec sleep 1000'
    depends_on: [db]
`)
	up := filepath.Join(r.Dir, "up")
	readyz := func(want int) {
		t.Helper()
		var code int
		var body string
		eventually(t, 5*time.Second, func() bool {
			code, body = r.Get(t, "/readyz")
			return code == want
		}, "/readyz %d %q, want %d", code, body, want)
		if want == http.StatusServiceUnavailable && !strings.Contains(body, "db") {
			t.Fatalf("/readyz body %q does not name db", body)
		}
	}
	readyz(http.StatusServiceUnavailable)
	if n := hhCount(t, r, "app", "start"); n != 0 {
		t.Fatalf("app started before db was ready")
	}

	var pids []int
	for i := range 3 {
		if err := os.WriteFile(up, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		readyz(http.StatusOK)
		st := hhGetStatus(t, r)
		pids = append(pids, st.proc("db").Pid, st.proc("app").Pid)
		if i == 2 {
			break
		}
		if err := os.Remove(up); err != nil {
			t.Fatal(err)
		}
		readyz(http.StatusServiceUnavailable)
		st = hhGetStatus(t, r)
		db := st.proc("db")
		if db.Ready || db.State == "stopping" || db.State == "backoff" || !hhAlive(db.Pid) {
			t.Fatalf("not-ready db must keep running untouched: %+v", db)
		}
		if app := st.proc("app"); app.State != "running" || !hhAlive(app.Pid) {
			t.Fatalf("app must keep running while db is not ready: %+v", app)
		}
		if m, _ := hhMetrics(t, r); m[`podvisor_process_ready{process="db"}`] != 0 || m["podvisor_ready"] != 0 {
			t.Fatalf("metrics still say ready while /readyz is 503")
		}
	}
	for i := 2; i < len(pids); i++ {
		if pids[i] != pids[i%2] || pids[i] == 0 {
			t.Fatalf("pids changed across flaps (db, app, db, app, ...): %v", pids)
		}
	}
	evs := r.ReadEvents(t)
	if n, m := len(filterEvents(evs, "db", "start")), len(filterEvents(evs, "app", "start")); n != 1 || m != 1 {
		t.Fatalf("db started %d times, app %d times; want 1 each", n, m)
	}
	st := hhGetStatus(t, r)
	if st.proc("db").Restarts != 0 || st.proc("app").Restarts != 0 {
		t.Fatalf("restarts counted for a readiness flap: %s", st.raw)
	}
	hhStopClean(t, r)
}

// TestRestartTruePropagates kills a dependency whose dependent asked for
// restart: true: the dependent must be stopped before the dependency is
// started again and started again once it is ready; a dependent without the
// flag must be left running (SPEC section 3).
func TestRestartTruePropagates(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  db:
    command: '`+ev("db", "start")+`; echo "db up"; exec sleep 1000'
    ready: {log: "^db up$"}
    restart: {policy: always, backoff: 200ms}
  app:
    command: |
      trap '`+ev("app", "term")+`; exit 0' TERM
      `+ev("app", "start")+`
      while :; do sleep 0.05; done
    depends_on:
      db: {condition: ready, restart: true}
  other:
    command: |
      trap '`+ev("other", "term")+`; exit 0' TERM
      `+ev("other", "start")+`
      while :; do sleep 0.05; done
    depends_on: [db]
`)
	// Short foreground sleeps, not 'sleep 1000 & wait': a TERM that reaches
	// the group while dash forks the background sleep can be lost (see
	// opTrapper), and here the teardown's TERM follows the app's restart
	// closely; under load (stress-ng) the app then outlived the 5 s budget.
	r.WaitEvent(t, "app", "start", 10*time.Second)
	r.WaitEvent(t, "other", "start", 10*time.Second)
	db := hhGetStatus(t, r).proc("db")
	if db.Pid == 0 {
		t.Fatalf("db has no pid: %+v", db)
	}
	if err := syscall.Kill(db.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool {
		return hhCount(t, r, "app", "start") == 2
	}, "app was not started again; events:\n%s\n%s", hhLazy(func() string { return readFile(r.Events) }), r.Stdout)

	evs := r.ReadEvents(t)
	dbStarts, appStarts := filterEvents(evs, "db", "start"), filterEvents(evs, "app", "start")
	terms := filterEvents(evs, "app", "term")
	if len(dbStarts) != 2 || len(terms) != 1 {
		t.Fatalf("db started %d times and app stopped %d times, want 2 and 1; events:\n%s", len(dbStarts), len(terms), readFile(r.Events))
	}
	if !terms[0].At.Before(dbStarts[1].At) {
		t.Errorf("app was stopped at %v, after db restarted at %v", terms[0].At, dbStarts[1].At)
	}
	if !appStarts[1].At.After(dbStarts[1].At) {
		t.Errorf("app started again at %v, before db restarted at %v", appStarts[1].At, dbStarts[1].At)
	}
	if n, m := hhCount(t, r, "other", "start"), hhCount(t, r, "other", "term"); n != 1 || m != 0 {
		t.Errorf("other (no restart: true) started %d times and was stopped %d times, want 1 and 0", n, m)
	}
	eventually(t, 5*time.Second, func() bool {
		st := hhGetStatus(t, r)
		return st.proc("db").Restarts == 1 && st.proc("app").State == "running" && st.Ready
	}, "not everything ready again after the restart")
	hhStopClean(t, r)
}

// TestStartTimeoutFatal: a service that is never ready within start_timeout,
// with restart: never, fails the run: exit 1, and its dependent never starts.
func TestStartTimeoutFatal(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
shutdown_timeout: 5s
processes:
  db:
    command: '`+ev("db", "start")+`; exec sleep 1000'
    ready: {exec: "false", start_interval: 50ms}
    start_timeout: 500ms
    restart: never
  app:
    command: '`+ev("app", "start")+`; exec sleep 1000'
    depends_on: [db]
`)
	code, elapsed := r.Wait(10 * time.Second)
	if code != 1 {
		t.Fatalf("exit code %d, want 1\n%s", code, r.Stdout)
	}
	if elapsed < 500*time.Millisecond {
		t.Fatalf("exited after %v, before start_timeout 500ms", elapsed)
	}
	// db's stop takes a SIGTERM to sleep: well inside eps.
	if limit := 500*time.Millisecond + 2*eps(); elapsed > limit {
		t.Errorf("exited after %v, want <= %v", elapsed, limit)
	}
	if _, ok := findEvent(r.ReadEvents(t), "db", "start"); !ok {
		t.Fatalf("db never started\n%s", r.Stdout)
	}
	if _, ok := findEvent(r.ReadEvents(t), "app", "start"); ok {
		t.Fatalf("app started although db never became ready\n%s", r.Stdout)
	}
	if !r.Stdout.Contains("start timeout") {
		t.Errorf("output does not say why:\n%s", r.Stdout)
	}
}

// ---- 3. HTTP ----

// TestReadyzTurns503BeforeStopSignals: on SIGTERM /readyz must answer 503
// before the first child is asked to stop (FAULTS C13, k8s #110309). The first
// child to stop (web, the leaf) asks /readyz from its TERM handler and
// records the answer; a poller in the test bounds the reaction time.
func TestReadyzTurns503BeforeStopSignals(t *testing.T) {
	t.Parallel()
	fetch := hhTestdata(t, "health_fetch.py")
	r := hhStartHTTP(t, `
shutdown_timeout: 10s
processes:
  db:
    command: 'exec sleep 1000'
  web:
    command: |
      trap 'python3 `+fetch+` "http://$E2E_ADDR/readyz" > "$E2E_DIR/readyz-at-term"; `+ev("web", "term")+`; exit 0' TERM
      `+ev("web", "start")+`
      while :; do sleep 0.05; done
    depends_on: [db]
`)
	r.WaitEvent(t, "web", "start", 10*time.Second)
	eventually(t, 5*time.Second, func() bool { c, _ := r.Get(t, "/readyz"); return c == http.StatusOK }, "/readyz never 200")

	// The poller owns its client and result; the test reads them after done.
	done := make(chan struct{})
	var first time.Time
	var firstBody string
	go func() {
		defer close(done)
		c := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil}}
		deadline := time.Now().Add(scaled(5 * time.Second))
		for time.Now().Before(deadline) {
			resp, err := c.Get(r.URL("/readyz"))
			if err != nil {
				time.Sleep(5 * time.Millisecond) // poll period while nothing answers
				continue
			}
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				first, firstBody = time.Now(), b.String()
				return
			}
		}
	}()
	sigAt := time.Now()
	hhStopClean(t, r)
	<-done

	got, err := os.ReadFile(filepath.Join(r.Dir, "readyz-at-term"))
	if err != nil {
		t.Fatalf("web's TERM handler left no answer: %v\n%s", err, r.Stdout)
	}
	if s := strings.TrimSpace(string(got)); s != "503" {
		t.Fatalf("/readyz answered %q to the first child asked to stop, want 503", s)
	}
	if first.IsZero() {
		t.Fatal("poller never saw 503 after SIGTERM")
	}
	if d := first.Sub(sigAt); d > eps() {
		t.Errorf("first 503 came %v after SIGTERM, want <= %v", d, eps())
	}
	if !strings.Contains(firstBody, "stopping") {
		t.Errorf("503 body %q does not say podvisor is stopping", firstBody)
	}
}

// TestStatusLifecycle walks /status through the states of SPEC section 4:
// completed (oneshot), pending with waiting_for, starting, backoff with the
// exit code, running, stopping.
func TestStatusLifecycle(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  init:
    type: oneshot
    command: 'true'
  db:
    command: 'exec sleep 1000'
    depends_on: {init: completed}
    ready: {file: "{{dir}}/db-ready", start_interval: 50ms}
  app:
    command: |
      trap 'sleep 1; exit 0' TERM
      while :; do sleep 0.05; done
    depends_on: [db]
  crashy:
    command: |
      if [ -f "$E2E_DIR/crashed" ]; then exec sleep 1000; fi
      touch "$E2E_DIR/crashed"
      exit 3
    restart: {policy: always, backoff: 2s}
`)
	var st hhStatus
	// crashy's backoff lasts 2s: look for it first.
	eventually(t, 2*time.Second, func() bool {
		st = hhGetStatus(t, r)
		return st.proc("crashy").State == "backoff"
	}, "crashy never in backoff: %s", hhLazy(func() string { return st.raw }))
	if c := st.proc("crashy"); c.ExitCode == nil || *c.ExitCode != 3 || c.Pid != 0 {
		t.Errorf("crashy in backoff: exit_code %v pid %d, want 3 and 0", c.ExitCode, c.Pid)
	}

	eventually(t, 5*time.Second, func() bool {
		st = hhGetStatus(t, r)
		return st.proc("db").State == "starting" && st.proc("app").State == "pending"
	}, "db not starting with app pending: %s", hhLazy(func() string { return st.raw }))
	if st.Phase != "starting" || st.Ready {
		t.Errorf("phase %q ready %v, want starting and false", st.Phase, st.Ready)
	}
	if app := st.proc("app"); !slices.Equal(app.WaitingFor, []string{"db: ready"}) || app.Pid != 0 || app.StartedAt != nil {
		t.Errorf("pending app: %+v, want waiting_for [db: ready], no pid, no started_at", app)
	}
	if db := st.proc("db"); db.Pid <= 0 || !hhAlive(db.Pid) || db.Ready || db.StartedAt == nil || db.ReadyAt != nil || len(db.WaitingFor) != 0 {
		t.Errorf("starting db: %+v", db)
	}
	if in := st.proc("init"); in.State != "completed" || in.Type != "oneshot" || !in.Ready || in.ExitCode == nil || *in.ExitCode != 0 {
		t.Errorf("init: %+v, want a completed oneshot with exit_code 0", in)
	}

	if err := os.WriteFile(filepath.Join(r.Dir, "db-ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool {
		st = hhGetStatus(t, r)
		return st.Phase == "running"
	}, "phase never running: %s", hhLazy(func() string { return st.raw }))
	for _, name := range []string{"db", "app", "crashy"} {
		p := st.proc(name)
		if p.State != "running" || !p.Ready || p.Pid <= 0 || !hhAlive(p.Pid) || p.Type != "service" {
			t.Errorf("%s: %+v, want a running, ready service", name, p)
		}
	}
	if !st.Ready {
		t.Errorf("phase running but ready false")
	}
	if db := st.proc("db"); db.ReadyAt == nil || db.ReadyAt.Before(*db.StartedAt) {
		t.Errorf("db ready_at %v, started_at %v", db.ReadyAt, db.StartedAt)
	}
	if c := st.proc("crashy"); c.Restarts != 1 || c.ExitCode == nil || *c.ExitCode != 3 {
		t.Errorf("crashy after its restart: %+v, want restarts 1 and the last exit_code 3", c)
	}

	r.Signal(syscall.SIGTERM)
	eventually(t, 2*time.Second, func() bool {
		st = hhGetStatus(t, r)
		return st.Phase == "stopping" && st.proc("app").State == "stopping"
	}, "never saw app stopping: %s", hhLazy(func() string { return st.raw }))
	if st.Ready {
		t.Errorf("ready true while stopping")
	}
	if code, _ := r.Wait(10 * time.Second); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

// hhSpecMetrics are the metric families SPEC section 4 names, plus one of the
// Go and one of the process collector.
var hhSpecMetrics = []string{
	"podvisor_process_up", "podvisor_process_ready", "podvisor_process_restarts_total",
	"podvisor_process_last_exit_code", "podvisor_process_start_duration_seconds",
	"podvisor_probe_duration_seconds", "podvisor_probe_failures_total", "podvisor_ready",
	"go_goroutines", "process_resident_memory_bytes",
}

// TestMetricsAfterRestart checks every metric of SPEC section 4 with its
// value after one crash and restart, and that the exposition passes
// `promtool check metrics`.
func TestMetricsAfterRestart(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  init:
    type: oneshot
    command: 'true'
  web:
    command: |
      if [ -f "$E2E_DIR/second" ]; then touch "$E2E_DIR/up"; exec sleep 1000; fi
      touch "$E2E_DIR/second"
      exit 3
    depends_on: {init: completed}
    restart: {policy: always, backoff: 100ms}
    ready: {file: "{{dir}}/up", start_interval: 50ms}
    live: {exec: "true", interval: 100ms}
`)
	var m map[string]float64
	var text string
	eventually(t, 10*time.Second, func() bool {
		m, text = hhMetrics(t, r)
		return m["podvisor_ready"] == 1 && m[`podvisor_probe_duration_seconds_count{probe="live",process="web"}`] >= 1
	}, "never ready with a live probe observed:\n%s", hhLazy(func() string { return text }))

	for _, name := range hhSpecMetrics {
		if !strings.Contains(text, "\n# TYPE "+name+" ") {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for series, want := range map[string]float64{
		`podvisor_ready`:                                                                1,
		`podvisor_process_up{process="web"}`:                                            1,
		`podvisor_process_ready{process="web"}`:                                         1,
		`podvisor_process_restarts_total{process="web"}`:                                1,
		`podvisor_process_last_exit_code{process="web"}`:                                3,
		`podvisor_process_up{process="init"}`:                                           0,
		`podvisor_process_ready{process="init"}`:                                        1,
		`podvisor_process_restarts_total{process="init"}`:                               0,
		`podvisor_process_last_exit_code{process="init"}`:                               0,
		`podvisor_probe_failures_total{probe="live",process="web"}`:                     0,
		`podvisor_probe_duration_seconds_bucket{probe="ready",process="web",le="+Inf"}`: m[`podvisor_probe_duration_seconds_count{probe="ready",process="web"}`],
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if d := m[`podvisor_process_start_duration_seconds{process="web"}`]; d <= 0 || d > scaled(5*time.Second).Seconds() {
		t.Errorf("start duration of web %v s, want in (0, 5]", d)
	}
	if n := m[`podvisor_probe_duration_seconds_count{probe="ready",process="web"}`]; n < 1 {
		t.Errorf("no ready probe observed for web")
	}
	if _, ok := m[`podvisor_probe_failures_total{probe="ready",process="web"}`]; !ok {
		t.Errorf("no ready probe failure counter for web")
	}
	if m["go_goroutines"] <= 0 || m["process_resident_memory_bytes"] <= 0 {
		t.Errorf("Go or process collector values missing")
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("promtool not installed and PODVISOR_REQUIRE_TOOLS=1")
		}
		t.Log("promtool not installed: exposition lint skipped")
	} else {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	hhStopClean(t, r)
}

// TestListenAddressInUse: a busy port fails the run with exit 1 before any
// child is spawned (FAULTS D11).
func TestListenAddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := startPodvisor(t, `
processes:
  a:
    command: 'touch {{dir}}/spawned; exec sleep 1000'
`, withArgs("--listen", ln.Addr().String()))
	code, elapsed := r.Wait(5 * time.Second)
	if code != 1 {
		t.Fatalf("exit code %d, want 1\n%s%s", code, r.Stdout, r.Stderr)
	}
	if limit := time.Second + eps(); elapsed > limit {
		t.Errorf("took %v to fail, want <= %v", elapsed, limit)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "spawned")); err == nil {
		t.Errorf("a child was spawned although the port was busy")
	}
	if out := r.Stdout.String() + r.Stderr.String(); !strings.Contains(out, "address already in use") {
		t.Errorf("output does not name the cause:\n%s", out)
	}
}

// TestHTTPReadOnlyAndNoSecrets: every route refuses other methods and changes
// nothing, there is no pprof, and no environment value (a canary in
// podvisor's and in children's environments) appears in any response or in
// podvisor's output (FAULTS E2, E4). No child prints its environment.
func TestHTTPReadOnlyAndNoSecrets(t *testing.T) {
	t.Parallel()
	canary := fmt.Sprintf("hunter2-%d-%d", os.Getpid(), time.Now().UnixNano())
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
env:
  GLOBAL_SECRET: "${PODVISOR_CANARY}-global"
processes:
  svc:
    command: 'exec sleep 1000'
    env: {CHILD_SECRET: "${PODVISOR_CANARY}-child"}
    ready: {exec: 'test -n "$CHILD_SECRET"', start_interval: 50ms}
    live: {exec: 'test -n "$CHILD_SECRET"', interval: 100ms}
  flaky:
    command: 'exit 7'
    env: {FLAKY_SECRET: "${PODVISOR_CANARY}-flaky"}
    restart: {policy: on-failure, backoff: 100ms}
  bad:
    command: 'exec sleep 1000'
    env: {BAD_SECRET: "${PODVISOR_CANARY}-bad"}
    ready: {exec: 'test -z "$BAD_SECRET"', start_interval: 50ms}
`, withEnv("PODVISOR_CANARY="+canary))

	var before hhStatus
	eventually(t, 10*time.Second, func() bool {
		before = hhGetStatus(t, r)
		return before.proc("svc").Ready && before.proc("flaky").Restarts >= 1
	}, "svc never ready or flaky never restarted: %s", hhLazy(func() string { return before.raw }))
	// The canary really reached the child, so its absence below means something.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", before.proc("svc").Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(env, []byte("CHILD_SECRET="+canary+"-child")) || !bytes.Contains(env, []byte("GLOBAL_SECRET="+canary+"-global")) {
		t.Fatalf("the canary did not reach svc's environment")
	}

	var bodies []string
	routes := []string{"/readyz", "/livez", "/status", "/metrics"}
	for _, path := range routes {
		code, body := hhRequest(t, r, http.MethodGet, path)
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("GET %s: %d", path, code)
		}
		bodies = append(bodies, body)
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			code, body := hhRequest(t, r, method, path)
			if code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", method, path, code)
			}
			bodies = append(bodies, body)
		}
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/nope", "/status/..%2F..%2Fetc%2Fpasswd", "/env"} {
		code, body := hhRequest(t, r, http.MethodGet, path)
		if code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
		bodies = append(bodies, body)
	}
	for _, args := range [][]string{{"status", "--addr", r.Addr}, {"status", "--addr", r.Addr, "--json"}} {
		code, out, errOut := hhPodvisor(t, 10*time.Second, args...)
		if code != 0 {
			t.Errorf("podvisor %v: exit %d: %s", args, code, errOut)
		}
		bodies = append(bodies, out, errOut)
	}

	after := hhGetStatus(t, r)
	if s, a := before.proc("svc"), after.proc("svc"); a.Pid != s.Pid || a.Restarts != 0 || a.State != "running" {
		t.Errorf("svc changed after the write requests: before %+v, after %+v", s, a)
	}
	hhStopClean(t, r)

	bodies = append(bodies, r.Stdout.String(), r.Stderr.String())
	for i, b := range bodies {
		if strings.Contains(b, canary) {
			t.Errorf("the canary leaked (text %d):\n%s", i, b)
		}
	}
}

// ---- 4. the wait and status subcommands ----

// TestWaitReadyAndStatusTable: `podvisor wait --ready` blocks while podvisor
// is not ready and succeeds once it is; `podvisor status` shows the processes.
func TestWaitReadyAndStatusTable(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
shutdown_timeout: 5s
processes:
  db:
    command: 'exec sleep 1000'
    ready: {file: "{{dir}}/db-ready", start_interval: 50ms}
  app:
    command: 'exec sleep 1000'
    depends_on: [db]
`)
	var out, errb bytes.Buffer
	wait := exec.Command(podvisorBin, "wait", "--ready", r.Addr, "--timeout", scaled(20*time.Second).String(), "--interval", "50ms")
	wait.Stdout, wait.Stderr = &out, &errb
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	waitDone := make(chan error, 1)
	go func() { waitDone <- wait.Wait() }()
	t.Cleanup(func() {
		if wait.ProcessState == nil {
			_ = wait.Process.Kill()
			<-waitDone
		}
	})

	// Not ready yet: wait must still be waiting after a few of its attempts.
	eventually(t, 5*time.Second, func() bool { return hhGetStatus(t, r).proc("db").State == "starting" }, "db not starting")
	hold := time.After(scaled(300 * time.Millisecond))
	for held := false; !held; {
		select {
		case err := <-waitDone:
			t.Fatalf("podvisor wait returned (%v) while podvisor was not ready: %s%s", err, out.String(), errb.String())
		case <-hold:
			held = true
		}
	}
	code, body := r.Get(t, "/readyz")
	if code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d %q before db-ready, want 503", code, body)
	}

	// The table while db is starting and app pending.
	code, table, errOut := hhPodvisor(t, 10*time.Second, "status", "--addr", r.Addr)
	if code != 0 {
		t.Fatalf("podvisor status: exit %d: %s", code, errOut)
	}
	hhTableRow(t, table, "db", "starting")
	hhTableRow(t, table, "app", "pending")

	if err := os.WriteFile(filepath.Join(r.Dir, "db-ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waitDone:
		if err != nil {
			t.Fatalf("podvisor wait --ready: %v\n%s%s", err, out.String(), errb.String())
		}
	case <-time.After(scaled(10 * time.Second)):
		t.Fatal("podvisor wait --ready did not return once podvisor was ready")
	}
	if !strings.Contains(out.String(), "ready") {
		t.Errorf("wait output %q does not say ready", out.String())
	}
	if code, _ := r.Get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("wait returned but /readyz is %d", code)
	}

	code, table, errOut = hhPodvisor(t, 10*time.Second, "status", "--addr", r.Addr)
	if code != 0 {
		t.Fatalf("podvisor status: exit %d: %s", code, errOut)
	}
	if !strings.Contains(table, "NAME") {
		t.Errorf("no table header:\n%s", table)
	}
	st := hhGetStatus(t, r)
	for _, name := range []string{"app", "db"} {
		row := hhTableRow(t, table, name, "running")
		if pid := strconv.Itoa(st.proc(name).Pid); !slices.Contains(row, pid) {
			t.Errorf("row %v does not show pid %s", row, pid)
		}
	}
	hhStopClean(t, r)
}

// hhTableRow returns the fields of the table row of process name and checks
// it shows state.
func hhTableRow(t testing.TB, table, name, state string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == name {
			if !slices.Contains(f, state) {
				t.Errorf("row of %s does not show %s: %q", name, state, line)
			}
			return f
		}
	}
	t.Fatalf("no row for %s in:\n%s", name, table)
	return nil
}

// TestWaitTCPTimeout: `podvisor wait --tcp` on a closed port gives up after
// --timeout with exit 1 and says what it last saw.
func TestWaitTCPTimeout(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t) // nothing listens there
	start := time.Now()
	// 1s, not less: a starved `wait` must still complete an attempt to
	// have something to report.
	code, _, stderr := hhPodvisor(t, 10*time.Second, "wait", "--tcp", addr, "--timeout", "1s", "--interval", "50ms")
	elapsed := time.Since(start)
	if code != 1 {
		t.Fatalf("exit code %d, want 1: %s", code, stderr)
	}
	if elapsed < time.Second || elapsed > time.Second+eps() {
		t.Errorf("gave up after %v, want 1s (+%v)", elapsed, eps())
	}
	for _, want := range []string{"timeout after 1s", addr, "connection refused"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("message %q lacks %q", stderr, want)
		}
	}
}

// TestHTTPHostileRequests: oversized or malformed requests get 4xx answers,
// connections that never finish their headers are dropped after the server's
// header timeout (5s), and meanwhile normal requests are served promptly
// (FAULTS D13, D14).
func TestHTTPHostileRequests(t *testing.T) {
	t.Parallel()
	r := hhStartHTTP(t, `
processes:
  a:
    command: 'exec sleep 1000'
`)
	eventually(t, 5*time.Second, func() bool { c, _ := r.Get(t, "/readyz"); return c == http.StatusOK }, "/readyz never 200")
	baseline, err := openFDs(r.Pid())
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a", 20<<10)
	for _, c := range []struct {
		name, req, want string
	}{
		{"huge header", "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n", "431"},
		{"huge URL", "GET /" + big + " HTTP/1.1\r\nHost: x\r\n\r\n", "431"},
		{"garbage", "\x00\x01garbage\r\n\r\n", "400"},
		{"HTTP/2 prior knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "400"},
	} {
		if got := hhRawRequest(t, r.Addr, c.req); !strings.HasPrefix(got, "HTTP/1.1 "+c.want+" ") {
			t.Errorf("%s: answered %q, want %s", c.name, got, c.want)
		}
	}

	// Slow clients: each sends part of a header and then nothing.
	const slow = 20
	conns := make([]net.Conn, 0, slow)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range slow {
		c, err := net.Dial("tcp", r.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: ")); err != nil {
			t.Fatal(err)
		}
	}
	opened := time.Now()
	if code, body := r.Get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz during the slow clients: %d %q", code, body)
	}
	if d := time.Since(opened); d > eps() {
		t.Errorf("/readyz took %v during the slow clients, want <= %v", d, eps())
	}
	const headerTimeout = 5 * time.Second // internal/server's ReadHeaderTimeout
	for i, c := range conns {
		_ = c.SetReadDeadline(opened.Add(headerTimeout + 2*eps()))
		var b [256]byte
		_, err := c.Read(b[:])
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("slow connection %d still open %v after its last byte", i, time.Since(opened))
		}
	}
	eventually(t, 2*time.Second, func() bool {
		fds, err := openFDs(r.Pid())
		return err == nil && len(fds) <= len(baseline)+2
	}, "podvisor's fds did not fall back to %d", len(baseline))
	if code, _ := r.Get(t, "/livez"); code != http.StatusOK {
		t.Errorf("/livez %d after the hostile requests", code)
	}
	hhStopClean(t, r)
}

// hhRawRequest writes req on a new connection and returns the first line of
// the answer ("" when the server closed without answering).
func hhRawRequest(t testing.TB, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(scaled(5 * time.Second)))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatalf("write: %v", err)
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(c)
	line, _, _ := strings.Cut(b.String(), "\r\n")
	return line
}
