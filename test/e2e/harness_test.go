// Package e2e holds black-box tests of the podvisor binary: they build it once,
// run it on small configs whose children are shell commands, and observe it
// only from outside (exit code and time, output, HTTP, event files, /proc).
//
// # Harness API (shared by every file of this package; keep it stable)
//
// Binary and timing:
//
//	podvisorBin                      path of the binary testharness.Binary built
//	                                 (once per source tree, shared by the suites)
//	slowdown                         factor from PODVISOR_TEST_SLOWDOWN (default 1)
//	scaled(d) time.Duration          d × slowdown
//	eps() time.Duration              scheduling slack for upper bounds: 0.75 s × slowdown
//	eventually(t, timeout, cond, format, args...)
//	                                 poll cond every 10 ms until true; t.Fatalf after
//	                                 scaled(timeout)
//
// Running podvisor:
//
//	r := startPodvisor(t, yaml, opts...) *Run
//
// writes yaml to r.Config (in r.Dir, a fresh t.TempDir) after replacing every
// "{{dir}}" with r.Dir, and starts `podvisor run -c r.Config --listen off`.
// podvisor's environment is the test's plus E2E_DIR=r.Dir and
// E2E_EVENTS=r.Events; children inherit both, so shell commands can write to
// "$E2E_EVENTS" (a bare $VAR passes config interpolation untouched). The
// process is SIGKILLed, with every descendant, on cleanup if still running.
// Options:
//
//	withHTTP()                listen on 127.0.0.1:0; r.Addr is the bound address
//	                          (read from podvisor's "serving" log line; with
//	                          withStdout, a port that was free is picked instead)
//	withArgs(args...)         extra arguments after `run -c FILE`
//	withEnv("K=V", ...)       extra environment for podvisor
//	withWrapper(argv...)      run argv... BINARY run ... (the wrapper must exec)
//	withPID1()                run under `unshare --pid --fork --mount-proc`;
//	                          skips the test if unshare cannot work here
//	withStdout(f)             podvisor's stdout is f (r.Stdout stays empty)
//	withPTY()                 stdin/stdout/stderr on a new pty, podvisor a session
//	                          leader with it as controlling terminal; r.Stdout
//	                          reads the master; r.WriteTTY writes to it
//
// *Run:
//
//	r.Dir, r.Config, r.Events, r.Addr   paths and address (see above)
//	r.Stdout, r.Stderr *lineBuffer      captured output (pty: both in Stdout)
//	r.Pid() int                         podvisor's pid (under withPID1 the host pid
//	                                    of the podvisor inside the namespace)
//	r.Signal(sig)                       send sig to podvisor; restarts Wait's clock
//	r.Wait(timeout) (code, elapsed)     wait for exit (t.Fatalf after scaled(timeout));
//	                                    code is 128+N for a signal death; elapsed is
//	                                    measured from the last Signal (or the start)
//	r.Exited() bool
//	r.WriteTTY(b)                       write to the pty master (withPTY)
//	r.URL(path) string, r.Get(t, path) (status int, body string)   HTTP (withHTTP)
//	getJSON(t, r, path, &v) string      GET path: 200 and JSON decoded into v, or t.Fatalf
//	r.WaitEvent(t, name, event, timeout) event      first matching event line
//	r.ReadEvents(t) []event
//	findEvent(evs, name, event) (event, bool), filterEvents(evs, name, event) []event
//	event{Name, Event, At, Rest}.Pid()  pid written by ev, else 0
//
// *lineBuffer (goroutine-safe):
//
//	String() string, Lines() []string, Contains(s) bool
//	WaitFor(t, re, timeout) string      first line matching regexp re, or t.Fatalf
//
// The helpers are thin wrappers over internal/testharness, which the other
// black-box suites share; fix a helper there and every suite has the fix.
//
// Event files: children append lines "NAME EVENT NANOS [rest]" (NANOS from
// `date +%s%N`, wall clock, comparable with time.Now().UnixNano()); ev(name,
// event) returns the shell snippet appending "NAME EVENT NANOS $$" to
// $E2E_EVENTS (so event.Pid() is the shell's pid; the snippet is meant for a
// config, where $$ stands for $). One short append is a single atomic write,
// so concurrent writers never interleave.
//
// /proc helpers (Linux):
//
//	readStat(pid) (procStat, error)     state, ppid, pgrp, session, tty_nr
//	statusField(pid, key) (string, error)   e.g. "SigBlk"
//	openFDs(pid) (map[int]string, error)    fd -> readlink target
//	allPids() []int, children(pid) []int, descendants(root) []int
//	nsMembers(pid) []int                 members of pid's PID namespace
//	zombies(pids) []int, pidsWithArg(marker) []int
//	ioctlInt(f, req, &n) error           e.g. unix.TIOCINQ: bytes waiting in a pipe
//	readFile(path) string                contents, "" if unreadable (for messages)
package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
	"golang.org/x/sys/unix"
)

// podvisorBin and slowdown are set once by TestMain before any test runs and
// never written again.
var (
	podvisorBin string
	slowdown    = 1.0
)

func TestMain(m *testing.M) {
	testharness.Main(m, "e2e", func(bin string, f float64) error {
		podvisorBin, slowdown = bin, f
		return nil
	})
}

// scaled stretches a deadline for slow machines.
func scaled(d time.Duration) time.Duration { return testharness.Scale(d, slowdown) }

// eps is the slack allowed on top of an exact timing bound: FAULTS' 0.5 s
// plus 0.25 s for podvisor's own exit path on a shared 2-core machine.
func eps() time.Duration { return scaled(750 * time.Millisecond) }

// eventually polls cond until it holds, failing the test after scaled(timeout).
func eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !testharness.Poll(scaled(timeout), 10*time.Millisecond, cond) {
		t.Fatalf("timed out after %v: "+format, append([]any{scaled(timeout)}, args...)...)
	}
}

// ---- running podvisor ----

// Run is one podvisor process started by startPodvisor.
type Run struct {
	t      testing.TB
	Dir    string // per-run directory; {{dir}} in the config, $E2E_DIR for children
	Config string // the written config file
	Events string // the event file children append to ($E2E_EVENTS)
	Addr   string // bound HTTP address under withHTTP, else ""
	Stdout *lineBuffer
	Stderr *lineBuffer

	cmd    *exec.Cmd
	proc   *testharness.Process
	pid1   bool
	master *os.File // pty master under withPTY

	mu          sync.Mutex // guards the fields below
	signalledAt time.Time
	pid         int // resolved podvisor pid (differs from cmd's under withPID1)
}

type runOpts struct {
	http    bool
	args    []string
	env     []string
	wrapper []string
	pid1    bool
	stdout  *os.File
	pty     bool
}

// option configures startPodvisor.
type option func(*runOpts)

func withHTTP() option                  { return func(o *runOpts) { o.http = true } }
func withArgs(args ...string) option    { return func(o *runOpts) { o.args = append(o.args, args...) } }
func withEnv(kv ...string) option       { return func(o *runOpts) { o.env = append(o.env, kv...) } }
func withWrapper(argv ...string) option { return func(o *runOpts) { o.wrapper = argv } }
func withPID1() option                  { return func(o *runOpts) { o.pid1 = true } }
func withStdout(f *os.File) option      { return func(o *runOpts) { o.stdout = f } }
func withPTY() option                   { return func(o *runOpts) { o.pty = true } }

// startPodvisor writes yaml and starts podvisor on it; see the file comment.
func startPodvisor(t testing.TB, yaml string, opts ...option) *Run {
	t.Helper()
	var o runOpts
	for _, opt := range opts {
		opt(&o)
	}
	if o.pid1 {
		skipWithoutUnshare(t)
	}
	dir := t.TempDir()
	r := &Run{
		t:      t,
		Dir:    dir,
		Config: filepath.Join(dir, "procs.yaml"),
		Events: filepath.Join(dir, "events"),
		Stdout: &lineBuffer{},
		Stderr: &lineBuffer{},
		pid1:   o.pid1,
	}
	if err := os.WriteFile(r.Config, []byte(strings.ReplaceAll(yaml, "{{dir}}", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := "off"
	if o.http {
		listen = "127.0.0.1:0"
		if o.stdout != nil { // the bound address cannot be read back: pick one
			listen = freeAddr(t)
			r.Addr = listen
		}
	}
	var argv []string
	if o.pid1 {
		argv = append(argv, testharness.UnshareArgv...)
	}
	argv = append(argv, o.wrapper...)
	argv = append(argv, podvisorBin, "run", "-c", r.Config, "--listen", listen)
	argv = append(argv, o.args...)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	// No control socket unless the test asks for one (control: in its
	// config, or PODVISOR_CONTROL in withEnv): see testharness.ControlOff.
	cmd.Env = append(testharness.Environ([]string{"PODVISOR_CONFIG"}, "E2E_DIR="+dir, "E2E_EVENTS="+r.Events), o.env...)
	cmd.WaitDelay = 2 * time.Second // never hang on a pipe some leftover holds
	var pts *os.File
	switch {
	case o.pty:
		var err error
		r.master, pts, err = openPTY()
		if err != nil {
			t.Fatalf("open pty: %v", err)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	default:
		cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
		if o.stdout != nil {
			cmd.Stdout = o.stdout
		}
	}
	r.cmd = cmd
	start := time.Now()
	p, err := testharness.Start(cmd)
	if err != nil {
		t.Fatalf("start podvisor: %v", err)
	}
	r.proc = p
	r.signalledAt = start
	if pts != nil {
		pts.Close() // the child has its copy; EOF/EIO on the master follows its exit
		go func() { _, _ = io.Copy(r.Stdout, r.master) }()
	}
	t.Cleanup(r.cleanup)
	if o.http && r.Addr == "" {
		line := r.Stdout.WaitFor(t, `msg="serving .*addr=`, 10*time.Second)
		m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line)
		r.Addr = m[1]
	}
	return r
}

// exitCode is the shell's view of an exit: 128+N for a death by signal N,
// -1 when there is no status. err (from Wait) is not consulted: with
// WaitDelay it can be ErrWaitDelay while ps holds the real status.
func exitCode(ps *os.ProcessState, _ error) int { return testharness.ExitCode(ps) }

// cleanup kills whatever is left of this run: podvisor and every descendant.
func (r *Run) cleanup() {
	if !r.proc.KillTree(10 * time.Second) {
		r.t.Errorf("podvisor pid %d did not die after SIGKILL", r.proc.Pid())
	}
	if r.master != nil {
		r.master.Close()
	}
}

// Pid is podvisor's pid as seen from the test.
func (r *Run) Pid() int {
	r.t.Helper()
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	if pid != 0 {
		return pid
	}
	pid = r.proc.Pid()
	if r.pid1 {
		// unshare --fork: podvisor is unshare's only child.
		eventually(r.t, 5*time.Second, func() bool {
			for _, c := range children(r.proc.Pid()) {
				if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", c)); exe == podvisorBin {
					pid = c
					return true
				}
			}
			return false
		}, "podvisor did not appear under unshare")
	}
	r.mu.Lock()
	r.pid = pid
	r.mu.Unlock()
	return pid
}

// Signal sends sig to podvisor and restarts the clock Wait reports.
// signalSpacing is the least time between two signals a test sends.
const signalSpacing = 30 * time.Millisecond

func (r *Run) Signal(sig syscall.Signal) {
	r.t.Helper()
	pid := r.Pid()
	r.mu.Lock()
	// podvisor counts the same signal arriving twice within 10 ms as one
	// delivery (coreutils timeout signals pid and group): keep signals of a
	// test apart by more, so each counts as its own.
	if since := time.Since(r.signalledAt); !r.signalledAt.IsZero() && since < signalSpacing {
		time.Sleep(signalSpacing - since)
	}
	r.signalledAt = time.Now()
	r.mu.Unlock()
	if err := syscall.Kill(pid, sig); err != nil {
		r.t.Fatalf("signal podvisor: %v", err)
	}
}

// SignalledAt is when the last Signal was sent, taken just before the kill:
// podvisor's own timers start after it, so a lower bound measured from it
// cannot fail on a test goroutine that was slow to read the clock.
func (r *Run) SignalledAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.signalledAt
}

// Wait waits for podvisor to exit and returns its exit code and the time since
// the last Signal (or the start).
func (r *Run) Wait(timeout time.Duration) (int, time.Duration) {
	r.t.Helper()
	if !r.proc.Wait(scaled(timeout)) {
		r.t.Fatalf("podvisor still running after %v\nstdout:\n%s\nstderr:\n%s", scaled(timeout), r.Stdout, r.Stderr)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc.Code(), r.proc.ExitedAt().Sub(r.signalledAt)
}

// Exited reports whether podvisor has exited.
func (r *Run) Exited() bool { return r.proc.Exited() }

// WriteTTY writes b to the pty master, as typing on the terminal would.
func (r *Run) WriteTTY(b []byte) {
	r.t.Helper()
	if r.master == nil {
		r.t.Fatal("WriteTTY without withPTY")
	}
	if _, err := r.master.Write(b); err != nil {
		r.t.Fatalf("write pty: %v", err)
	}
}

// URL is the full URL of path on podvisor's HTTP server.
func (r *Run) URL(path string) string { return "http://" + r.Addr + path }

// Get fetches path with a short timeout; status 0 means no answer. The
// answer must match schema/openapi.json (apiGet).
func (r *Run) Get(t testing.TB, path string) (int, string) {
	t.Helper()
	code, body, err := apiGet(t, http.DefaultClient, r.URL(path), scaled(time.Second))
	if code == 0 && err != nil {
		return 0, err.Error()
	}
	return code, body
}

// getJSON fetches path, fails the test unless it answers 200 with JSON, and
// decodes that into v; it returns the body.
func getJSON(t testing.TB, r *Run, path string, v any) string {
	t.Helper()
	code, body := r.Get(t, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return body
}

// environWithout is the test's environment without key.
func environWithout(key string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, key+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// freeAddr returns a 127.0.0.1 address that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ports, err := testharness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0])
}

func skipWithoutUnshare(t testing.TB) {
	t.Helper()
	if err := testharness.CanUnshare(); err != nil {
		t.Skipf("cannot run podvisor as PID 1 (needs root and unshare): %v", err)
	}
}

// openPTY opens a new pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) { return testharness.OpenPTY() }

// ---- captured output ----

// lineBuffer collects output and lets tests wait for a line.
type lineBuffer struct {
	testharness.Buffer // goroutine-safe
}

// WaitFor returns the first complete line matching the regexp re, failing the
// test after scaled(timeout).
func (b *lineBuffer) WaitFor(t testing.TB, re string, timeout time.Duration) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var found string
	eventually(t, timeout, func() bool {
		for _, l := range b.Lines() {
			if rx.MatchString(l) {
				found = l
				return true
			}
		}
		return false
	}, "no line matching %q in output:\n%s", re, b)
	return found
}

// ---- event files ----

// event is one line "NAME EVENT NANOS [rest]" of an event file; Pid() is the
// pid in Rest as written by ev, or 0.
type event = testharness.Event

// ev is a shell snippet appending "NAME EVENT NANOS PID" to $E2E_EVENTS, PID
// being the shell's. It is written for a config string, where podvisor turns
// $$ into $ at load: the shell sees $$.
func ev(name, what string) string { return testharness.Stamp("E2E_EVENTS", name, what) }

// ReadEvents returns the events written so far.
func (r *Run) ReadEvents(t testing.TB) []event {
	t.Helper()
	evs, err := testharness.ReadEvents(r.Events)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// WaitEvent returns the first event name/event, failing after scaled(timeout).
func (r *Run) WaitEvent(t testing.TB, name, what string, timeout time.Duration) event {
	t.Helper()
	var found event
	eventually(t, timeout, func() bool {
		e, ok := findEvent(r.ReadEvents(t), name, what)
		found = e
		return ok
	}, "no event %q %q; events:\n%s\noutput:\n%s", name, what, readFile(r.Events), r.Stdout)
	return found
}

// findEvent returns the first event with name and event.
func findEvent(evs []event, name, what string) (event, bool) {
	return testharness.FindEvent(evs, name, what)
}

// filterEvents returns every event with name and event, in file order.
func filterEvents(evs []event, name, what string) []event {
	return testharness.FilterEvents(evs, name, what)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// ---- /proc (testharness) ----

// procStat is the part of /proc/PID/stat the tests use.
type procStat = testharness.Stat

//lint:ignore U1000 part of the harness API above, kept for the tests that come
func allPids() []int { return testharness.AllPids() }

func readStat(pid int) (procStat, error)              { return testharness.ReadStat(pid) }
func statusField(pid int, key string) (string, error) { return testharness.StatusField(pid, key) }
func openFDs(pid int) (map[int]string, error)         { return testharness.OpenFDs(pid) }
func children(pid int) []int                          { return testharness.Children(pid) }
func descendants(root int) []int                      { return testharness.Descendants(root) }
func zombies(pids []int) []int                        { return testharness.Zombies(pids) }
func pidsWithArg(marker string) []int                 { return testharness.PidsWithArg(marker) }

// nsMembers lists the processes in pid's PID namespace, pid included.
func nsMembers(pid int) []int {
	ns, err := testharness.PIDNamespace(pid)
	if err != nil {
		return nil
	}
	return testharness.NamespaceMembers(ns)
}

// ioctlInt runs an int-returning ioctl (TIOCINQ/FIONREAD: bytes waiting) on f.
func ioctlInt(f *os.File, req uint, out *int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) { *out, ierr = unix.IoctlGetInt(int(fd), req) }); err != nil {
		return err
	}
	return ierr
}
