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

// execCgroupYAML: t has a cgroup of its own (resources), limits, a umask
// and no_new_privs (the exec shim, podvisor's own binary, sets them; run as
// root here: the test binary's directory is not reachable for another
// user); idle has resources too but is stopped when exec runs in its
// context.
const execCgroupYAML = `
control: "{{dir}}/c.sock"
processes:
  t:
    command: [sleep, "1000"]
    resources: {memory: {max: 64Mi}, pids: {max: 64}}
    limits: {nofile: "1000:2000", core: 0, nproc: "500:600"}
    umask: "0027"
    no_new_privs: true
  idle:
    command: [sleep, "1000"]
    resources: {memory: {max: 32Mi}}
`

// privLines returns the lines of a /proc/PID/status text that the
// process's privileges set.
func privLines(status string) []string {
	var out []string
	for _, l := range strings.Split(status, "\n") {
		for _, k := range []string{"Umask:", "NoNewPrivs:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:", "Uid:", "Gid:"} {
			if strings.HasPrefix(l, k) {
				out = append(out, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	return out
}

// cgroupOf returns a /proc/PID/cgroup text's lines of the controllers
// podvisor limits (v1: memory, pids; v2: the one line).
func cgroupOf(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) == 3 && (f[0] == "0" || strings.Contains(","+f[1]+",", ",memory,") || strings.Contains(","+f[1]+",", ",pids,")) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// podvisor exec enters the process's cgroup and gets its limits, umask,
// no_new_privs and capabilities, seen from outside in /proc.
func TestExec_EntersTheCgroupAndLimits(t *testing.T) {
	needCgroups(t)
	r := startPodvisor(t, execCgroupYAML, withHTTP())
	endRun(t, r)
	var pid int
	eventually(t, 10*time.Second, func() bool {
		if r.Exited() {
			t.Fatalf("podvisor exited:\n%s\n%s", r.Stdout, r.Stderr)
		}
		st, _, p, _ := statusOf(t, r, "t")
		pid = p
		return st == "running"
	}, "t not running:\n%s", r.Stdout)

	own, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	want := cgroupOf(string(own))
	if len(want) == 0 || !strings.Contains(strings.Join(want, "\n"), "t.") {
		t.Fatalf("t's cgroups %q: not a group of its own", own)
	}
	if got := cgroupOf(mustCtl(t, r, 0, "exec", "t", "--", "cat", "/proc/self/cgroup")); !slices.Equal(got, want) {
		t.Errorf("exec's cgroups %q, the process's %q", got, want)
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustCtl(t, r, 0, "exec", "t", "--", "cat", "/proc/self/limits"); got != string(limits) || !strings.Contains(got, "Max open files            1000                 2000") {
		t.Errorf("exec's limits:\n%s\nthe process's:\n%s", got, limits)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	wantPriv := privLines(string(status))
	if got := privLines(mustCtl(t, r, 0, "exec", "t", "--", "cat", "/proc/self/status")); !slices.Equal(got, wantPriv) ||
		!slices.Contains(wantPriv, "Umask: 0027") || !slices.Contains(wantPriv, "NoNewPrivs: 1") {
		t.Errorf("exec's privileges %q, the process's %q", got, wantPriv)
	}
	// With -i as well (the stream path spawns the same way).
	code, out, errOut := ctlIn(t, r, "", "exec", "-i", "t", "--", "cat", "/proc/self/cgroup")
	if got := cgroupOf(out); code != 0 || !slices.Equal(got, want) {
		t.Errorf("exec -i: exit %d, cgroups %q (stderr %q), the process's %q", code, got, errOut, want)
	}

	// A stopped process has no cgroup: the command gets one of its own
	// with the process's limits, removed after it.
	mustCtl(t, r, 0, "stop", "idle")
	out = mustCtl(t, r, 0, "exec", "idle", "--", "sh", "-c", `p=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3); echo "$p"; cat /sys/fs/cgroup/memory$p/memory.limit_in_bytes`)
	lines := strings.Fields(out)
	if len(lines) != 2 || !strings.Contains(lines[0], "idle@exec-") || lines[1] != strconv.Itoa(32<<20) {
		t.Fatalf("exec into stopped idle: %q, want its own cgroup idle@exec-... with memory 32Mi", out)
	}
	eventually(t, 10*time.Second, func() bool {
		_, err := os.Stat("/sys/fs/cgroup/memory" + lines[0])
		return os.IsNotExist(err)
	}, "the exec's cgroup %s still there after it ended", lines[0])
}

// ctlIn runs podvisor ARGS on r's socket with input as stdin.
func ctlIn(t *testing.T, r *Run, input string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaled(60*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, podvisorBin, args...)
	cmd.Env = append(environWithout("PODVISOR_CONTROL"), "PODVISOR_CONTROL="+filepath.Join(r.Dir, "c.sock"))
	cmd.Stdin = strings.NewReader(input)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// exec -i forwards stdin over pipes (its end is the command's EOF),
// stdout and stderr stay apart, and the exit code is the command's (128+N
// for a signal); -t alone gives a terminal without input; -it needs a
// terminal.
func TestExec_StdinAndTerminal(t *testing.T) {
	r := startPodvisor(t, "control: \"{{dir}}/c.sock\"\nprocesses:\n  t: {command: [sleep, \"1000\"]}\n", withHTTP())
	eventually(t, 10*time.Second, func() bool { st, _, _, _ := statusOf(t, r, "t"); return st == "running" }, "t not running:\n%s", r.Stdout)
	big := strings.Repeat("0123456789abcdef", 20000) // beyond a pipe's and a frame's size
	code, out, errOut := ctlIn(t, r, "one\ntwo\n"+big, "exec", "-i", "t", "--", "sh", "-c", "cat; echo to-err >&2; exit 3")
	if code != 3 || out != "one\ntwo\n"+big || errOut != "to-err\n" {
		t.Errorf("exec -i: exit %d, stdout %d bytes (%.40q), stderr %q; want 3, the input back, to-err", code, len(out), out, errOut)
	}
	if code, _, errOut := ctlIn(t, r, "", "exec", "--stdin", "t", "--", "sh", "-c", "kill -TERM $$"); code != 128+15 {
		t.Errorf("exec -i of a command killed by SIGTERM: exit %d (%s), want 143", code, errOut)
	}
	code, out, errOut = ctlIn(t, r, "", "exec", "-t", "t", "--", "sh", "-c", "tty; stty size; echo $TERM; exit 5")
	if f := strings.Fields(out); code != 5 || len(f) != 4 || !strings.HasPrefix(f[0], "/dev/pts/") || f[1] != "24" || f[2] != "80" || f[3] != "xterm" {
		t.Errorf("exec -t: exit %d, output %q (stderr %q); want 5, a /dev/pts terminal of 24x80, TERM=xterm", code, out, errOut)
	}
	if code, _, errOut := ctlIn(t, r, "x", "exec", "-it", "t", "--", "cat"); code != 1 || !strings.Contains(errOut, "needs a terminal as input") {
		t.Errorf("exec -it without a terminal: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := ctlIn(t, r, "", "exec", "-i", "nosuch", "--", "true"); code != 1 || !strings.Contains(errOut, `no process named "nosuch"`) {
		t.Errorf("exec -i into an unknown process: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := ctlIn(t, r, "", "exec", "-i", "t", "--", "no-such-command-here"); code != 127 || !strings.Contains(errOut, "no-such-command-here") {
		t.Errorf("exec -i of a missing command: exit %d, stderr %q; want 127", code, errOut)
	}
}
