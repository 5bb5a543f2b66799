package e2e

// Operating a running podvisor over its control socket (issue 12): the
// restart, stop, start, signal, reload and logs verbs of the real binary
// against a real podvisor, observed through the CLI's output and exit code,
// the children's event lines and /status.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ctl runs `podvisor ARGS...` against r's control socket ({{dir}}/c.sock).
func ctl(t *testing.T, r *Run, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return ctlAs(t, r, nil, args...)
}

func ctlAs(t *testing.T, r *Run, cred *syscall.Credential, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaled(60*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, podvisorBin, args...)
	cmd.Env = append(environWithout("PODVISOR_CONTROL"), "PODVISOR_CONTROL="+filepath.Join(r.Dir, "c.sock"))
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return exitCode(cmd.ProcessState, err), out.String(), errb.String()
}

func mustCtl(t *testing.T, r *Run, want int, args ...string) string {
	t.Helper()
	code, out, errOut := ctl(t, r, args...)
	if code != want {
		t.Fatalf("podvisor %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s\npodvisor:\n%s", strings.Join(args, " "), code, want, out, errOut, r.Stdout)
	}
	return out + errOut
}

// statusOf reads /status and returns name's state, reason and pid.
func statusOf(t *testing.T, r *Run, name string) (string, string, int, uint64) {
	t.Helper()
	_, body := r.Get(t, "/status")
	var st struct {
		Generation uint64 `json:"generation"`
		Processes  []struct {
			Name, State, Reason string
			Pid                 int
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, body)
	}
	for _, p := range st.Processes {
		if p.Name == name {
			return p.State, p.Reason, p.Pid, st.Generation
		}
	}
	return "absent", "", 0, st.Generation
}

const operateYAML = `
control: "{{dir}}/c.sock"
processes:
  db:
    command: %s
  app:
    command: %s
    depends_on: {db: {condition: started, restart: true}}
  web:
    command: %s
    depends_on: {app: started}
  other:
    command: %s
`

func TestOperate_Verbs(t *testing.T) {
	r := startPodvisor(t, fmt.Sprintf(operateYAML, opTrapper("db"), opTrapper("app"), opTrapper("web"),
		shq(`trap 'echo got-hup' HUP; echo other-line-1; echo other-line-2; while :; do sleep 0.05; done`)), withHTTP())
	for _, n := range []string{"db", "app", "web"} {
		r.WaitEvent(t, n, "start", 10*time.Second)
	}
	eventually(t, 10*time.Second, func() bool { st, _, _, _ := statusOf(t, r, "other"); return st == "running" }, "other not running")

	// restart db carries app (restart: true) but not web.
	_, _, webPid, _ := statusOf(t, r, "web")
	out := mustCtl(t, r, 0, "restart", "db")
	if !strings.Contains(out, "db: restarted (pid ") || !strings.Contains(out, "app: restarted with db") {
		t.Fatalf("restart output:\n%s", out)
	}
	evs := r.ReadEvents(t)
	if appTerm, dbTerm := filterEvents(evs, "app", "exit"), filterEvents(evs, "db", "term"); len(appTerm) != 1 || len(dbTerm) != 1 || !appTerm[0].At.Before(dbTerm[0].At) {
		t.Fatalf("app must be down before db is stopped:\n%s", readFile(r.Events))
	}
	if _, _, pid, _ := statusOf(t, r, "web"); pid != webPid {
		t.Fatalf("web (no restart: true) was restarted: pid %d -> %d", webPid, pid)
	}

	// stop db: web, app, db go down in that order and stay down.
	out = mustCtl(t, r, 0, "stop", "db")
	for _, want := range []string{"db: stopped (was pid", "app: stopped with db", "web: stopped with db"} {
		if !strings.Contains(out, want) {
			t.Fatalf("stop output lacks %q:\n%s", want, out)
		}
	}
	evs = r.ReadEvents(t)
	webExit, appTerm := filterEvents(evs, "web", "exit"), filterEvents(evs, "app", "term")
	if len(webExit) != 1 || len(appTerm) != 2 || !webExit[0].At.Before(appTerm[1].At) {
		t.Fatalf("web must exit before app is stopped:\n%s", readFile(r.Events))
	}
	for _, n := range []string{"db", "app", "web"} {
		if st, why, _, _ := statusOf(t, r, n); st != "stopped" || why != "stopped by podvisor stop" {
			t.Fatalf("%s: state %q reason %q", n, st, why)
		}
	}
	if code, _ := r.Get(t, "/readyz"); code != 503 {
		t.Fatalf("/readyz %d with stopped services", code)
	}

	// start app is refused while db is stopped; start db brings all back.
	code, _, errOut := ctl(t, r, "start", "app")
	if code != 1 || !strings.Contains(errOut, "dependency db is stopped") {
		t.Fatalf("start app: exit %d: %s", code, errOut)
	}
	out = mustCtl(t, r, 0, "start", "db")
	if !strings.Contains(out, "web: started with db") {
		t.Fatalf("start output:\n%s", out)
	}
	eventually(t, 10*time.Second, func() bool {
		return len(filterEvents(r.ReadEvents(t), "web", "start")) == 2 && len(filterEvents(r.ReadEvents(t), "db", "start")) == 3
	}, "web and db did not start again:\n%s", readFile(r.Events))

	// signal, logs, did-you-mean, usage.
	mustCtl(t, r, 0, "signal", "other", "HUP")
	eventually(t, 10*time.Second, func() bool { return r.Stdout.Contains("got-hup") }, "other never saw SIGHUP")
	if out := mustCtl(t, r, 0, "logs", "other", "--tail", "2"); !strings.Contains(out, "got-hup") || strings.Contains(out, "other-line-1") {
		t.Fatalf("logs --tail 2:\n%s", out)
	}
	if out := mustCtl(t, r, 1, "restart", "othr"); !strings.Contains(out, `did you mean "other"`) {
		t.Fatalf("unknown name:\n%s", out)
	}
	mustCtl(t, r, 2, "signal", "other")

	// reload: only the changed process restarts; an invalid file changes nothing.
	_, _, dbPid, gen := statusOf(t, r, "db")
	src := readFile(r.Config)
	if err := os.WriteFile(r.Config, []byte(strings.Replace(src, "other-line-2", "other-line-3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, r, 0, "reload", "--dry-run"); !strings.Contains(out, "restart other: command changed") {
		t.Fatalf("dry run:\n%s", out)
	}
	if out := mustCtl(t, r, 0, "reload"); !strings.Contains(out, fmt.Sprintf("config generation %d", gen+1)) {
		t.Fatalf("reload:\n%s", out)
	}
	if _, _, pid, g := statusOf(t, r, "db"); pid != dbPid || g != gen+1 {
		t.Fatalf("db pid %d -> %d (unchanged process touched?), generation %d", dbPid, pid, g)
	}
	if err := os.WriteFile(r.Config, []byte(src+"  bad: {command: [x], depends_on: [nope]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, r, 1, "reload"); !strings.Contains(out, "procs.yaml:") || !strings.Contains(out, `unknown process "nope"`) {
		t.Fatalf("invalid reload:\n%s", out)
	}
	_, body := r.Get(t, "/metrics")
	if !strings.Contains(body, `podvisor_reloads_total{result="applied"} 1`) || !strings.Contains(body, `podvisor_reloads_total{result="invalid"} 1`) {
		t.Fatalf("reload metrics:\n%s", body)
	}

	r.Signal(syscall.SIGTERM)
	code, _ = r.Wait(30 * time.Second)
	wantCode(t, r, code, 0)
	if _, err := os.Lstat(filepath.Join(r.Dir, "c.sock")); !os.IsNotExist(err) {
		t.Fatalf("control socket left behind: %v", err)
	}
}

// SIGHUP reloads too; podvisor as PID 1 of its own PID namespace.
func TestOperate_PID1(t *testing.T) {
	r := startPodvisor(t, `
control: "{{dir}}/c.sock"
processes:
  a:
    command: `+opTrapper("a")+`
  b:
    command: `+opTrapper("b")+`
`, withPID1())
	r.WaitEvent(t, "a", "start", 10*time.Second)
	r.WaitEvent(t, "b", "start", 10*time.Second)
	out := mustCtl(t, r, 0, "restart", "a")
	if !strings.Contains(out, "a: restarted (pid ") {
		t.Fatalf("restart under PID 1:\n%s", out)
	}
	eventually(t, 10*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "a", "start")) == 2 },
		"a did not start again:\n%s", readFile(r.Events))
	src := readFile(r.Config)
	if err := os.WriteFile(r.Config, []byte(strings.Replace(src, `"b start`, `"b start2`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		r.Signal(syscall.SIGHUP)
	}
	r.WaitEvent(t, "b", "start2", 10*time.Second)
	if n := len(filterEvents(r.ReadEvents(t), "a", "start")); n != 2 {
		t.Fatalf("a (unchanged) started %d times after SIGHUPs", n)
	}
	r.Stdout.WaitFor(t, `config reloaded`, 10*time.Second)
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(30 * time.Second)
	wantCode(t, r, code, 0)
}

// A user who is neither root nor podvisor's user gets nothing done.
func TestOperate_OtherUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the client as another user")
	}
	r := startPodvisor(t, `
control: "{{dir}}/c.sock"
processes:
  a:
    command: `+opTrapper("a")+`
`)
	r.WaitEvent(t, "a", "start", 10*time.Second)
	// Let the other user reach the socket file, so that what refuses it is
	// the peer credential check, not only the directory's mode.
	for _, d := range []string{filepath.Dir(r.Dir), r.Dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(r.Dir, "podvisor-client")
	data, err := os.ReadFile(podvisorBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "stop", "a")
	cmd.Env = []string{"PODVISOR_CONTROL=" + filepath.Join(r.Dir, "c.sock")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	code := exitCode(cmd.ProcessState, err)
	if code != 1 || !strings.Contains(string(out), "permission denied") {
		t.Fatalf("other user: exit %d (%v): %s", code, err, out)
	}
	if len(filterEvents(r.ReadEvents(t), "a", "term")) != 0 {
		t.Fatal("a refused command acted")
	}
	r.Signal(syscall.SIGTERM)
	r.Wait(30 * time.Second)
}

// A live socket belongs to another podvisor: refused before anything starts.
// A stale one (its podvisor was SIGKILLed) is replaced.
func TestOperate_LiveAndStaleSocket(t *testing.T) {
	dir := shortTemp(t)
	yaml := fmt.Sprintf("control: %q\nprocesses:\n  a:\n    command: %s\n", filepath.Join(dir, "c.sock"), opTrapper("a"))
	first := startPodvisor(t, yaml)
	first.WaitEvent(t, "a", "start", 10*time.Second)
	second := startPodvisor(t, yaml)
	code, _ := second.Wait(10 * time.Second)
	if code != 1 || !second.Stdout.Contains(fmt.Sprintf("another podvisor (pid %d, config %s) is listening", first.Pid(), first.Config)) {
		t.Fatalf("second podvisor: exit %d\n%s", code, second.Stdout)
	}
	if len(second.ReadEvents(t)) != 0 {
		t.Fatal("the refused podvisor started something")
	}
	first.Signal(syscall.SIGKILL)
	first.Wait(10 * time.Second)
	if _, err := os.Lstat(filepath.Join(dir, "c.sock")); err != nil {
		t.Fatalf("no stale socket after SIGKILL: %v", err)
	}
	third := startPodvisor(t, yaml)
	third.WaitEvent(t, "a", "start", 10*time.Second)
	third.Stdout.WaitFor(t, "control socket ready", 10*time.Second)
	third.Signal(syscall.SIGTERM)
	code, _ = third.Wait(30 * time.Second)
	wantCode(t, third, code, 0)
}

// opTrapper is trapper without a long-lived background child: a TERM that
// reaches the group while the shell forks `sleep 1000 &` can be lost by the
// forked copy before it execs (dash), leaving the sleep to outlive the
// stop; short foreground sleeps make every incarnation stop promptly.
func opTrapper(name string) string {
	return shq(fmt.Sprintf(`trap '%s; sleep 0.2; %s; exit 143' TERM; %s; while :; do sleep 0.05; done`,
		ev(name, "term"), ev(name, "exit"), ev(name, "start")))
}

// shortTemp is a directory with a path short enough for a unix socket.
func shortTemp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "pvop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// A non-root podvisor (as in a non-root, read-only container) puts its
// socket in a per-user directory under $TMPDIR, which the CLI finds by the
// same rule; where the default directory cannot be created (here an
// $XDG_RUNTIME_DIR it may not write), podvisor runs on without a control
// socket and says so.
func TestOperate_NonRootDefaultSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run podvisor as another user")
	}
	if err := os.Chmod(filepath.Dir(podvisorBin), 0o755); err != nil { // let uid 65534 run it
		t.Fatal(err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	base := shortTemp(t)
	writable, readonly := filepath.Join(base, "tmp"), filepath.Join(base, "ro")
	for _, d := range []string{writable, readonly} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(base, 0o755)
	os.Chmod(writable, 0o1777)
	cfg := filepath.Join(base, "procs.yaml")
	if err := os.WriteFile(cfg, []byte("listen: \"off\"\nprocesses:\n  a: {command: [sleep, \"1000\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(extra ...string) []string {
		return append([]string{"PATH=/usr/bin:/bin", "TMPDIR=" + writable}, extra...)
	}
	run := func(extra ...string) (*exec.Cmd, *lineBuffer) {
		out := &lineBuffer{}
		cmd := exec.Command(podvisorBin, "run", "-c", cfg)
		cmd.Env = env(extra...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, out
	}

	cmd, out := run()
	sock := filepath.Join(writable, "podvisor-65534", "control.sock")
	out.WaitFor(t, "control socket ready", 10*time.Second)
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatalf("no socket at the default path: %v\n%s", err, out)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket owner %d mode %v, want 65534 and 0600", st.Uid, fi.Mode().Perm())
	}
	client := exec.Command(podvisorBin, "restart", "a")
	client.Env = env()
	client.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	if b, err := client.CombinedOutput(); err != nil || !strings.Contains(string(b), "a: restarted") {
		t.Fatalf("restart as the same user: %v: %s", err, b)
	}
	// A second podvisor at the same default place fails at once, naming the
	// first: it must not run on with the first answering for it.
	second := exec.Command(podvisorBin, "run", "-c", cfg)
	second.Env = env()
	second.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	b, err := second.CombinedOutput()
	if code := second.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("a second podvisor at the same default socket: exit %d (%v), want 1\n%s", code, err, b)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", cmd.Process.Pid), "config " + cfg, sock, "--control PATH"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the second podvisor's refusal lacks %q:\n%s", want, b)
		}
	}
	// A podvisor run by this one (a fat pod's entrypoint under kube play)
	// leaves the default socket to its parent and runs.
	nested := filepath.Join(base, "nested.yaml")
	if err := os.WriteFile(nested, []byte("listen: \"off\"\nprocesses:\n  n: {command: [sleep, \"1000\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("listen: \"off\"\nprocesses:\n  a: {command: [sleep, \"1000\"]}\n  inner: {command: [%q, run, -c, %q]}\n", podvisorBin, nested)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := ctlAt(t, sock, "reload"); code != 0 {
		t.Fatalf("reload adding a nested podvisor: exit %d: %s", code, errOut)
	}
	out.WaitFor(t, "belongs to the podvisor this one runs under", 10*time.Second)
	// A refusal names who answered.
	if code, _, errOut := ctlAt(t, sock, "stop", "nosuch"); code != 1 || !strings.Contains(errOut, fmt.Sprintf("answered by podvisor pid %d, config %s", cmd.Process.Pid, cfg)) {
		t.Errorf("stop nosuch: exit %d, stderr %q: want the answering podvisor named", code, errOut)
	}
	// root is served too.
	rootClient := exec.Command(podvisorBin, "stop", "a", "--control", sock)
	if b, err := rootClient.CombinedOutput(); err != nil || !strings.Contains(string(b), "a: stopped") {
		t.Fatalf("stop as root: %v: %s", err, b)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("podvisor: %v\n%s", err, out)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}

	cmd, out = run("XDG_RUNTIME_DIR=" + readonly) // not writable for uid 65534
	out.WaitFor(t, "running without a control socket", 10*time.Second)
	out.WaitFor(t, "all processes ready", 10*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("podvisor without a socket: %v\n%s", err, out)
	}
}

// ctlAt runs `podvisor ARGS... --control SOCK` as root.
func ctlAt(t *testing.T, sock string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(podvisorBin, append(args, "--control", sock)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}
