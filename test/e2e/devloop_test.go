package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 42: profiles and subsets, podvisor exec, run -d and down, observed
// from outside: the events the children write, /proc, exit codes.

// svc is a service that records its start and runs until stopped.
func svc(name string) string {
	return shq(ev(name, "start") + `; touch "$E2E_DIR/` + name + `.ready"; exec sleep 1000`)
}

// profilesYAML's processes are ready once they wrote their start event
// (a file each), so a dependent's start event comes after its dependency's.
const profilesYAML = `
control: "{{dir}}/c.sock"
processes:
  db: {command: %[1]s, ready: {file: "{{dir}}/db.ready", start_interval: 20ms}}
  api: {command: %[2]s, depends_on: [db], ready: {file: "{{dir}}/api.ready", start_interval: 20ms}}
  web: {command: %[3]s, depends_on: [api]}
  worker: {command: %[4]s, depends_on: [db]}
  dbg: {command: %[5]s, depends_on: [db], profiles: [debug]}
  helper: {command: %[6]s, profiles: [tools], ready: {file: "{{dir}}/helper.ready", start_interval: 20ms}}
  tool: {command: %[7]s, depends_on: [helper], profiles: [tools]}
`

func profilesConfig() string {
	return fmt.Sprintf(profilesYAML, svc("db"), svc("api"), svc("web"), svc("worker"), svc("dbg"), svc("helper"), svc("tool"))
}

// started returns the names that wrote a start event, in order.
func started(t *testing.T, r *Run) []string {
	var out []string
	for _, e := range r.ReadEvents(t) {
		if e.Event == "start" {
			out = append(out, e.Name)
		}
	}
	return out
}

func before(order []string, a, b string) bool {
	i, j := slices.Index(order, a), slices.Index(order, b)
	return i >= 0 && j >= 0 && i < j
}

func TestProfiles_RunStartsDefaultPlusProfile(t *testing.T) {
	r := startPodvisor(t, profilesConfig(), withHTTP(), withArgs("--profile", "debug"))
	for _, n := range []string{"db", "api", "web", "worker", "dbg"} {
		r.WaitEvent(t, n, "start", 10*time.Second)
	}
	eventually(t, 10*time.Second, func() bool { code, _ := r.Get(t, "/readyz"); return code == 200 }, "never ready:\n%s", r.Stdout)
	order := started(t, r)
	if !before(order, "db", "api") || !before(order, "api", "web") || !before(order, "db", "dbg") || !before(order, "db", "worker") {
		t.Errorf("start order %v: a dependency after its dependent", order)
	}
	for _, n := range []string{"helper", "tool"} {
		if slices.Contains(order, n) {
			t.Errorf("%s (profile tools, not enabled) started: %v", n, order)
		}
		if st, why, _, _ := statusOf(t, r, n); st != "stopped" || !strings.Contains(why, "not in this run") {
			t.Errorf("%s: %s (%s), want stopped, not in this run", n, st, why)
		}
	}
	// start of a process outside the set brings its dependency along, first.
	out := mustCtl(t, r, 0, "start", "tool")
	if !strings.Contains(out, "helper: started for tool") {
		t.Errorf("start tool:\n%s", out)
	}
	r.WaitEvent(t, "tool", "start", 10*time.Second)
	if order := started(t, r); !before(order, "helper", "tool") {
		t.Errorf("start order %v: tool before its dependency helper", order)
	}
	if code, _ := r.Get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz %d after start tool", code)
	}
}

func TestProfiles_NamesRunThoseAndTheirDependencies(t *testing.T) {
	r := startPodvisor(t, profilesConfig(), withHTTP(), withArgs("web", "dbg"))
	for _, n := range []string{"db", "api", "web", "dbg"} {
		r.WaitEvent(t, n, "start", 10*time.Second)
	}
	eventually(t, 10*time.Second, func() bool { code, _ := r.Get(t, "/readyz"); return code == 200 }, "never ready:\n%s", r.Stdout)
	order := started(t, r)
	slices.Sort(order)
	if want := []string{"api", "db", "dbg", "web"}; !slices.Equal(order, want) {
		t.Errorf("started %v, want %v (the named and their dependencies, a named one in a profile too)", order, want)
	}
	// A typo is refused, exit 2, with what was meant.
	cmd := exec.Command(podvisorBin, "run", "-c", r.Config, "--listen", "off", "--control", "off", "--profile", "debgu")
	b, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(b), `no process has profile "debgu" (did you mean "debug"?)`) {
		t.Errorf("--profile debgu: exit %d\n%s", code, b)
	}
}

// project is a directory with a procs.yaml, in which commands run as a
// user in another terminal would run them: no -c, no --control.
type project struct {
	t   *testing.T
	dir string
}

func newProject(t *testing.T, yaml string) *project {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "procs.yaml"), []byte(strings.ReplaceAll(yaml, "{{dir}}", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &project{t: t, dir: dir}
	t.Cleanup(func() { p.pv(0, "down", "--timeout", "30s") })
	return p
}

// pv runs podvisor ARGS in the project's directory; timeout 0: the test's.
func (p *project) pv(timeout time.Duration, args ...string) (int, string, string) {
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), scaled(timeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, podvisorBin, args...)
	cmd.Dir = p.dir
	cmd.Env = append(environWithout("PODVISOR_CONTROL"), "E2E_EVENTS="+filepath.Join(p.dir, "events"))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func (p *project) must(want int, args ...string) string {
	p.t.Helper()
	code, out, errOut := p.pv(0, args...)
	if code != want {
		p.t.Fatalf("podvisor %s in %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), p.dir, code, want, out, errOut)
	}
	return out + errOut
}

// backgroundPid reads the pid run -d printed.
func backgroundPid(t *testing.T, out string) int {
	_, rest, ok := strings.Cut(out, "in the background (pid ")
	pid, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(rest)[0], ");"))
	if !ok || err != nil {
		t.Fatalf("no pid in %q", out)
	}
	return pid
}

func TestRunDetached_TwoProjectsFromTwoShells(t *testing.T) {
	a := newProject(t, "listen: \"off\"\nprocesses:\n  alpha: {command: [sleep, \"1000\"], ready: {exec: [\"true\"]}}\n")
	b := newProject(t, "listen: \"off\"\nprocesses:\n  beta: {command: [sleep, \"1000\"]}\n")
	pidA := backgroundPid(t, a.must(0, "run", "-d"))
	pidB := backgroundPid(t, b.must(0, "run", "-d"))
	for _, pid := range []int{pidA, pidB} {
		st, err := readStat(pid)
		if err != nil {
			t.Fatalf("background podvisor %d: %v", pid, err)
		}
		if st.Session != pid {
			t.Errorf("podvisor %d: session %d, want a session of its own", pid, st.Session)
		}
	}
	// Each project's terminal finds its own podvisor, never the other.
	if out := a.must(0, "status"); !strings.Contains(out, "alpha") || strings.Contains(out, "beta") {
		t.Errorf("status in project a:\n%s", out)
	}
	if out := b.must(0, "status"); !strings.Contains(out, "beta") || strings.Contains(out, "alpha") {
		t.Errorf("status in project b:\n%s", out)
	}
	if out := a.must(1, "restart", "beta"); !strings.Contains(out, fmt.Sprintf("pid %d", pidA)) {
		t.Errorf("restart beta in project a was not refused by a's podvisor:\n%s", out)
	}
	// A second run -d of a project that runs is refused.
	if out := a.must(1, "run", "-d"); !strings.Contains(out, "a podvisor already runs on") {
		t.Errorf("second run -d:\n%s", out)
	}
	out := a.must(0, "down")
	if !strings.Contains(out, "stopped: ") || !strings.Contains(out, "alpha: signal SIGTERM") || !strings.Contains(out, "exit code 0") {
		t.Errorf("down's report:\n%s", out)
	}
	// Exited (a zombie until its new parent reaps it) when down returns.
	if st, err := readStat(pidA); err == nil && st.State != 'Z' {
		t.Errorf("podvisor %d still running (state %c) after down returned", pidA, st.State)
	}
	if _, err := readStat(pidB); err != nil {
		t.Errorf("down in project a stopped project b's podvisor: %v", err)
	}
	b.must(0, "down")
}

func TestRunDetached_FailureBeforeReady(t *testing.T) {
	p := newProject(t, "listen: \"off\"\nprocesses:\n  setup: {command: [sh, -c, \"echo setup-broke; exit 3\"], type: job}\n  app: {command: [sleep, \"1000\"], depends_on: {setup: completed}}\n")
	out := p.must(3, "run", "-d")
	if !strings.Contains(out, "ended before it was ready, with exit code 3") || !strings.Contains(out, "setup-broke") {
		t.Errorf("run -d of a failing set:\n%s", out)
	}
}

const execYAML = `
control: "{{dir}}/c.sock"
env: {GLOBAL: g}
processes:
  t:
    command: [sleep, "1000"]
    user: "65534:65534"
    working_dir: "%[1]s/work"
    env_file: "%[1]s/app.env"
    env: {FOO: bar, API_TOKEN: s3cr3t-value}
`

// incarnationEnv are the variables of one incarnation, which exec does not get.
var incarnationEnv = []string{"NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC"}

func environOf(t *testing.T, data string) []string {
	var out []string
	for _, kv := range strings.Split(strings.TrimRight(data, "\x00"), "\x00") {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(incarnationEnv, k) {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
}

// statusIDs returns the Uid, Gid and Groups lines of a /proc/PID/status text.
func statusIDs(status string) []string {
	var out []string
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, "Uid:") || strings.HasPrefix(l, "Gid:") || strings.HasPrefix(l, "Groups:") {
			out = append(out, l)
		}
	}
	return out
}

func TestExec_RunsInTheProcessContext(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil { // reachable for uid 65534
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(base, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "app.env"), []byte("FROM_FILE=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startPodvisor(t, fmt.Sprintf(execYAML, base), withHTTP())
	var pid int
	eventually(t, 10*time.Second, func() bool { st, _, p, _ := statusOf(t, r, "t"); pid = p; return st == "running" }, "t not running:\n%s", r.Stdout)

	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, r, 0, "exec", "t", "--", "cat", "/proc/self/environ")
	if got, want := environOf(t, out), environOf(t, string(environ)); !slices.Equal(got, want) {
		t.Errorf("exec's environment differs from the process's:\n got %q\nwant %q", got, want)
	}
	for _, kv := range []string{"FOO=bar", "FROM_FILE=1", "GLOBAL=g", "API_TOKEN=s3cr3t-value"} {
		if !strings.Contains(out, kv) {
			t.Errorf("exec's environment lacks %s", kv)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out = mustCtl(t, r, 0, "exec", "t", "--", "cat", "/proc/self/status")
	if got, want := statusIDs(out), statusIDs(string(status)); !slices.Equal(got, want) || !strings.Contains(want[0], "65534") {
		t.Errorf("exec's ids %q, the process's %q", got, want)
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		t.Fatal(err)
	}
	if out = mustCtl(t, r, 0, "exec", "t", "--", "readlink", "/proc/self/cwd"); strings.TrimSpace(out) != cwd || cwd != filepath.Join(base, "work") {
		t.Errorf("exec's cwd %q, the process's %q", out, cwd)
	}
	// The exit code is the command's; stderr comes back as stderr.
	code, stdout, stderr := ctl(t, r, "exec", "t", "--", "sh", "-c", "echo to-out; echo to-err >&2; exit 7")
	if code != 7 || stdout != "to-out\n" || stderr != "to-err\n" {
		t.Errorf("exec exit %d, stdout %q, stderr %q; want 7, to-out, to-err", code, stdout, stderr)
	}
	if code, _, stderr := ctl(t, r, "exec", "t", "--", "no-such-command-here"); code != 127 || !strings.Contains(stderr, "no-such-command-here") {
		t.Errorf("exec of a missing command: exit %d, stderr %q; want 127", code, stderr)
	}
	if code, _, stderr := ctl(t, r, "exec", "tt", "--", "true"); code != 1 || !strings.Contains(stderr, `no process named "tt"`) {
		t.Errorf("exec into an unknown process: exit %d, stderr %q", code, stderr)
	}
	// podvisor's own log names the command, its secrets redacted.
	mustCtl(t, r, 0, "exec", "t", "--", "echo", "s3cr3t-value")
	r.Stdout.WaitFor(t, `msg=exec .*redacted: API_TOKEN`, 10*time.Second)
	if strings.Contains(r.Stdout.String(), "s3cr3t-value") {
		t.Errorf("podvisor's log shows a secret:\n%s", r.Stdout)
	}
}
