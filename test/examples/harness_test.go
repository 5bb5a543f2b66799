// Package examples runs the examples in examples/ end to end: the real
// podvisor binary, built once, as PID 1 of a fresh PID namespace (`unshare
// --pid --fork --mount-proc`), supervising the real Debian programs (nginx,
// PostgreSQL, Redis, git). Everything is observed from outside: podvisor's
// output, its HTTP endpoints, files the examples write, exit codes and /proc.
//
// A test whose programs are missing skips, saying what to install, unless
// PODVISOR_REQUIRE_TOOLS=1 (CI, `make test-examples`), where it fails.
// PODVISOR_TEST_SLOWDOWN=N stretches every deadline N times.
package examples

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// Set once by TestMain before any test runs, read-only afterwards.
var (
	podvisorBin string
	repoRoot    string
	slowdown    = 1.0
)

func TestMain(m *testing.M) {
	// The shared binary is built with the flags of Dockerfile.base's build
	// (less -ldflags, which only the link step sees), so that
	// TestDockerfileBuildsStaticBinary reuses the compiled packages.
	testharness.Main(m, "examples", func(bin string, f float64) (err error) {
		podvisorBin, slowdown = bin, f
		repoRoot, err = testharness.ModuleRoot()
		return err
	})
}

// scaled stretches a deadline by PODVISOR_TEST_SLOWDOWN.
func scaled(d time.Duration) time.Duration { return testharness.Scale(d, slowdown) }

// eventually polls cond every 20 ms until it holds, failing the test after
// scaled(timeout) with what msg says then.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, msg func() string) {
	t.Helper()
	if !testharness.Poll(scaled(timeout), 20*time.Millisecond, cond) {
		t.Fatalf("after %v: %s", scaled(timeout), msg())
	}
}

// missing skips the test, or fails it under PODVISOR_REQUIRE_TOOLS=1.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s (PODVISOR_REQUIRE_TOOLS=1)", msg)
	}
	t.Skipf("%s; `make test-examples` installs what is missing (or set PODVISOR_REQUIRE_TOOLS=1 to fail instead of skipping)", msg)
}

// needPrograms checks that each program is installed, looking in the sbin
// directories too (nginx lives there, and not every PATH has them).
func needPrograms(t *testing.T, pkg string, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err == nil {
			continue
		}
		if fileExists("/usr/sbin/"+p) || fileExists("/sbin/"+p) {
			continue
		}
		missing(t, "%s not found: apt-get install %s", p, pkg)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// needPIDNamespace checks once that unshare can make a PID namespace here
// (root, or a kernel and container that allow it).
func needPIDNamespace(t *testing.T) {
	t.Helper()
	if err := testharness.CanUnshare(); err != nil {
		missing(t, "cannot run podvisor as PID 1 with `unshare --pid --fork --mount-proc` (needs root and util-linux): %v", err)
	}
}

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago (all held at once, so none is handed out twice).
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	nums, err := testharness.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	var ports []string
	for _, p := range nums {
		ports = append(ports, strconv.Itoa(p))
	}
	return ports
}

// line is one line of podvisor's output: "proc | text" split at the first
// " | " (podvisor pads proc to align the bars).
type line struct {
	Proc, Text string
}

// output collects podvisor's output lines; safe for concurrent use.
type output struct {
	mu    sync.Mutex
	lines []line
}

func (o *output) add(s string) {
	l := line{Text: s}
	if i := strings.Index(s, " | "); i >= 0 {
		l = line{Proc: strings.TrimSpace(s[:i]), Text: s[i+3:]}
	}
	o.mu.Lock()
	o.lines = append(o.lines, l)
	o.mu.Unlock()
}

func (o *output) snapshot() []line {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]line(nil), o.lines...)
}

// Run is one `podvisor run` of an example, as PID 1 of its own namespace.
type Run struct {
	t      *testing.T
	State  string            // STATE_DIR of the example: a fresh directory, others may traverse it
	Addr   string            // podvisor's HTTP address
	Ports  map[string]string // port variable -> the free port it was set to
	Pid    int               // podvisor's pid in the test's namespace
	ns     string            // podvisor's PID namespace, as readlink /proc/PID/ns/pid
	cmd    *exec.Cmd
	out    output
	done   chan struct{} // closed once podvisor exited and its output was read
	code   int
	waited bool
}

// startExample runs `podvisor run -c examples/NAME/procs.yaml` in a new PID
// namespace, with STATE_DIR set to a fresh directory, each of portVars set
// to a free port (see r.Ports) and env (KEY=VALUE) added to the test's
// environment. It returns once podvisor's pid is known.
// On cleanup podvisor is SIGKILLed if still running, which kills every
// process of its namespace, and the state directory is removed.
func startExample(t *testing.T, name string, portVars []string, env ...string) *Run {
	t.Helper()
	needPIDNamespace(t)
	ports := freePorts(t, len(portVars)+1)
	addr := "127.0.0.1:" + ports[0]
	named := map[string]string{}
	for i, v := range portVars {
		named[v] = ports[i+1]
		env = append(env, v+"="+ports[i+1])
	}
	cfg := filepath.Join(repoRoot, "examples", name, "procs.yaml")
	r := startInNamespace(t, []string{podvisorBin, "run", "-c", cfg, "--listen", addr}, env...)
	r.Addr, r.Ports = addr, named
	return r
}

// startInNamespace runs argv as PID 1 of a new PID namespace with STATE_DIR
// set to a fresh directory (see startExample).
func startInNamespace(t *testing.T, argv []string, env ...string) *Run {
	t.Helper()
	// Not t.TempDir: its 0700 parents would keep the postgres, redis and
	// nginx users out.
	state, err := testharness.SharedTempDir(t, "podvisor-ex-", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{t: t, State: state, done: make(chan struct{})}
	r.cmd = exec.Command(testharness.UnshareArgv[0], append(testharness.UnshareArgv[1:], argv...)...)
	// No control socket (unless env asks): see testharness.ControlOff.
	r.cmd.Env = append(testharness.Environ(nil, "STATE_DIR="+state), env...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout, r.cmd.Stderr = pw, pw
	p, err := testharness.Start(r.cmd)
	if err != nil {
		pr.Close()
		pw.Close()
		t.Fatalf("start unshare: %v", err)
	}
	pw.Close()
	t.Cleanup(r.cleanup)

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			r.out.add(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr) // past an over-long line: keep the pipe drained
		pr.Close()
	}()
	go func() {
		<-p.Done()
		r.code = p.Code()
		// Every writer of the pipe was in the namespace, which died with
		// podvisor: EOF follows at once.
		select {
		case <-readDone:
		case <-time.After(scaled(10 * time.Second)):
		}
		close(r.done)
	}()

	eventually(t, 10*time.Second, func() bool {
		r.Pid = childOf(p.Pid())
		return r.Pid != 0 || r.exited()
	}, func() string { return "the program did not start under unshare" })
	if r.Pid == 0 {
		t.Fatalf("unshare exited with %d before its program started:\n%s", r.code, r.dump())
	}
	ns, err := testharness.PIDNamespace(r.Pid)
	if err != nil {
		t.Fatalf("podvisor's pid namespace: %v", err)
	}
	if own, _ := testharness.PIDNamespace(os.Getpid()); own == ns {
		t.Fatalf("podvisor runs in the test's own PID namespace %s", ns)
	}
	r.ns = ns
	return r
}

func (r *Run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *Run) cleanup() {
	if !r.exited() {
		if r.Pid != 0 {
			_ = syscall.Kill(r.Pid, syscall.SIGKILL) // PID 1: the kernel kills the namespace
		}
		_ = r.cmd.Process.Kill()
		select {
		case <-r.done:
		case <-time.After(scaled(20 * time.Second)):
			r.t.Errorf("podvisor (pid %d) did not exit after SIGKILL", r.Pid)
		}
	}
	if r.t.Failed() {
		r.t.Logf("podvisor output:\n%s", r.dump())
	}
}

// Signal sends sig to podvisor (PID 1 inside; unshare does not forward).
func (r *Run) Signal(sig syscall.Signal) {
	r.t.Helper()
	if err := syscall.Kill(r.Pid, sig); err != nil {
		r.t.Fatalf("signal podvisor: %v", err)
	}
}

// Wait waits for podvisor to exit and returns its exit code.
func (r *Run) Wait(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(scaled(timeout)):
		r.t.Fatalf("podvisor still running after %v", scaled(timeout))
	}
	r.waited = true
	return r.code
}

// Lines returns the output so far.
func (r *Run) Lines() []line { return r.out.snapshot() }

func (r *Run) dump() string {
	var b strings.Builder
	for _, l := range r.out.snapshot() {
		fmt.Fprintf(&b, "%-8s | %s\n", l.Proc, l.Text)
	}
	return b.String()
}

// Index returns the index of the first line of proc that contains sub, or
// -1. An empty sub matches any line of proc.
func (r *Run) Index(proc, sub string) int {
	for i, l := range r.out.snapshot() {
		if l.Proc == proc && strings.Contains(l.Text, sub) {
			return i
		}
	}
	return -1
}

// event returns the index of podvisor's first (or, with last, its last)
// message msg about process, and its fields; -1 if there is none.
func (r *Run) event(msg, process string, last bool) (int, map[string]string) {
	idx, fields := -1, map[string]string(nil)
	for i, l := range r.out.snapshot() {
		if l.Proc != "podvisor" {
			continue
		}
		f := parseLogfmt(l.Text)
		if f["msg"] == msg && f["process"] == process {
			idx, fields = i, f
			if !last {
				break
			}
		}
	}
	return idx, fields
}

// Event returns the index and fields of podvisor's first message msg about
// process; -1 if there is none.
func (r *Run) Event(msg, process string) (int, map[string]string) {
	return r.event(msg, process, false)
}

// LastEvent is Event for the last such message.
func (r *Run) LastEvent(msg, process string) (int, map[string]string) {
	return r.event(msg, process, true)
}

// WaitIndex waits until a line of proc contains sub and returns its index.
func (r *Run) WaitIndex(proc, sub string, timeout time.Duration) int {
	r.t.Helper()
	i := -1
	eventually(r.t, timeout, func() bool {
		if i = r.Index(proc, sub); i < 0 && r.exited() {
			if i = r.Index(proc, sub); i < 0 { // the last lines came with the exit
				r.t.Fatalf("podvisor exited with %d; no line of %s contains %q", r.code, proc, sub)
			}
		}
		return i >= 0
	}, func() string { return fmt.Sprintf("no line of %s contains %q", proc, sub) })
	return i
}

// Before fails the test unless the lines at a and b exist and a comes first.
func (r *Run) Before(a, b int, what string) {
	r.t.Helper()
	if a < 0 || b < 0 || a >= b {
		r.t.Errorf("%s: want line %d before line %d (-1 is missing)", what, a, b)
	}
}

// parseLogfmt reads slog's text format: key=value pairs, values optionally
// in Go-quoted form.
func parseLogfmt(s string) map[string]string {
	m := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return m
		}
		key, rest := s[:eq], s[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			end = min(end+1, len(rest))
			if v, err := strconv.Unquote(rest[:end]); err == nil {
				val = v
			} else {
				val = strings.Trim(rest[:end], `"`)
			}
			s = rest[end:]
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				sp = len(rest)
			}
			val, s = rest[:sp], rest[sp:]
		}
		m[key] = val
	}
}

// get fetches url and returns the status code and body; err for no answer.
func get(url string) (int, string, error) { return testharness.Get(url, 5*time.Second) }

// WaitReady waits until podvisor's /readyz answers 200.
func (r *Run) WaitReady(timeout time.Duration) {
	r.t.Helper()
	var code int
	var body string
	var err error
	if !testharness.Poll(scaled(timeout), 50*time.Millisecond, func() bool {
		if r.exited() {
			r.t.Fatalf("podvisor exited with %d before it was ready", r.code)
		}
		code, body, err = get("http://" + r.Addr + "/readyz")
		return err == nil && code == http.StatusOK
	}) {
		r.t.Fatalf("/readyz not 200 after %v: %d %q %v", scaled(timeout), code, strings.TrimSpace(body), err)
	}
}

// processStatus is one process in podvisor's /status.
type processStatus = testharness.ProcessStatus

// Status fetches /status and returns its processes by name.
func (r *Run) Status() map[string]processStatus {
	r.t.Helper()
	code, body, err := get("http://" + r.Addr + "/status")
	if err != nil || code != http.StatusOK {
		r.t.Fatalf("GET /status: %d %v", code, err)
	}
	var doc struct {
		Processes []processStatus `json:"processes"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		r.t.Fatalf("GET /status: %v in %s", err, body)
	}
	m := map[string]processStatus{}
	for _, p := range doc.Processes {
		m[p.Name] = p
	}
	return m
}

// nsMembers returns the pids, in the test's namespace, of every process of
// podvisor's PID namespace, podvisor included.
func (r *Run) nsMembers() []int { return testharness.NamespaceMembers(r.ns) }

// HostPid maps a pid of podvisor's namespace (as /status shows it) to the
// test's namespace; 0 if there is no such process.
func (r *Run) HostPid(nsPid int) int {
	for _, pid := range r.nsMembers() {
		f := strings.Fields(statusField(pid, "NSpid"))
		if len(f) > 0 && f[len(f)-1] == strconv.Itoa(nsPid) {
			return pid
		}
	}
	return 0
}

// zombies returns the zombies in podvisor's namespace.
func (r *Run) zombies() []int {
	var zs []int
	for _, pid := range r.nsMembers() {
		if strings.HasPrefix(statusField(pid, "State"), "Z") {
			zs = append(zs, pid)
		}
	}
	return zs
}

// CheckNoZombies waits until no process of the namespace is a zombie:
// podvisor, as PID 1, must reap every orphan.
func (r *Run) CheckNoZombies() {
	r.t.Helper()
	eventually(r.t, 5*time.Second, func() bool { return len(r.zombies()) == 0 }, func() string {
		return fmt.Sprintf("zombies in podvisor's namespace: %v", r.zombies())
	})
}

// survivors describes the processes that belong to the run: members of its
// namespace, and any process whose command line or environment mentions the
// state directory (every child inherits STATE_DIR).
func (r *Run) survivors() []string {
	var found []string
	for _, pid := range allPids() {
		ns, _ := testharness.PIDNamespace(pid)
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if ns == r.ns || strings.Contains(string(cmdline), r.State) || strings.Contains(string(environ), "STATE_DIR="+r.State+"\x00") {
			found = append(found, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
	}
	return found
}

// CheckGone fails the test if any process outlived podvisor.
func (r *Run) CheckGone() {
	r.t.Helper()
	if !r.waited {
		r.t.Fatal("CheckGone before Wait")
	}
	for _, s := range r.survivors() {
		r.t.Errorf("process survived podvisor: %s", s)
	}
}

// CheckCleanTeardown fails the test if the teardown needed SIGKILL or the
// final sweep found processes the ordered teardown had missed.
func (r *Run) CheckCleanTeardown() {
	r.t.Helper()
	for _, l := range r.out.snapshot() {
		if l.Proc != "podvisor" {
			continue
		}
		if msg := parseLogfmt(l.Text)["msg"]; msg == "sending SIGKILL" || strings.HasPrefix(msg, "final sweep") {
			r.t.Errorf("unclean teardown: %s", l.Text)
		}
	}
}

func allPids() []int { return testharness.AllPids() }

// childOf returns a child of pid (unshare has exactly one), or 0.
func childOf(pid int) int {
	if kids := testharness.Children(pid); len(kids) > 0 {
		return kids[0]
	}
	return 0
}

// statusField returns the value of key in /proc/PID/status, "" if absent.
func statusField(pid int, key string) string {
	v, _ := testharness.StatusField(pid, key)
	return v
}
