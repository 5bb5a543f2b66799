// Package kube holds black-box tests of `podvisor kube play`, `kube
// generate` and `wait --gone`: they build the binary once, run it on
// manifests whose containers are shell loops, and observe it from outside
// (exit codes, output, event files the processes write).
//
// Event files: each process appends lines "NAME EVENT NANOS" (NANOS from
// `date +%s%N`) to $E2E_EVENTS; $E2E_DIR is the test's directory. podvisor
// gets both in its environment and the processes inherit them.
package kube

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var podvisorBin string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "podvisor-kube-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	// Searchable by every user: one test runs podvisor as nobody.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	podvisorBin = filepath.Join(dir, "podvisor")
	gobin, err := exec.LookPath("go")
	if err != nil && os.Getenv("GOROOT") != "" {
		gobin, err = filepath.Join(os.Getenv("GOROOT"), "bin", "go"), nil
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube tests: no go command to build podvisor with")
		return 2
	}
	build := exec.Command(gobin, "build", "-o", podvisorBin, "github.com/podvisor/podvisor/cmd/podvisor")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "kube tests: build podvisor:", err)
		return 2
	}
	// A fat pod's entrypoint is "podvisor": the one just built.
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return m.Run()
}

// syncBuffer is a goroutine-safe output buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run is one podvisor process.
type run struct {
	t              *testing.T
	dir, events    string
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// start runs `podvisor ARGS...` with E2E_DIR and E2E_EVENTS set.
func start(t *testing.T, args ...string) *run {
	t.Helper()
	return startProg(t, podvisorBin, args...)
}

// startEnv is start with extra environment entries (which win).
func startEnv(t *testing.T, env []string, args ...string) *run {
	t.Helper()
	return startProgEnv(t, env, podvisorBin, args...)
}

// startProg runs PROG ARGS... (a wrapper that execs podvisor) the same way.
func startProg(t *testing.T, prog string, args ...string) *run {
	t.Helper()
	return startProgEnv(t, nil, prog, args...)
}

func startProgEnv(t *testing.T, env []string, prog string, args ...string) *run {
	t.Helper()
	r := &run{t: t, dir: t.TempDir(), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	r.events = filepath.Join(r.dir, "events")
	r.cmd = exec.Command(prog, args...)
	r.cmd.Dir = r.dir
	// No control socket: tests run side by side, and two podvisors may not
	// share the default one.
	r.cmd.Env = append(os.Environ(), "E2E_DIR="+r.dir, "E2E_EVENTS="+r.events, "PODVISOR_CONTROL=off")
	r.cmd.Env = append(r.cmd.Env, env...)
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		r.code = r.cmd.ProcessState.ExitCode()
		if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Signal(syscall.SIGKILL)
			<-r.done
		}
	})
	return r
}

// wait waits for podvisor to exit and returns its exit code.
func (r *run) wait(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(timeout):
		r.t.Fatalf("podvisor still running after %s\nstdout:\n%s\nstderr:\n%s", timeout, r.stdout, r.stderr)
		return -1
	}
}

func (r *run) signal(sig syscall.Signal) {
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatal(err)
	}
}

// events reads the event file: "NAME EVENT" -> first NANOS.
func (r *run) readEvents() map[string]int64 {
	evs := map[string]int64{}
	data, _ := os.ReadFile(r.events)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			continue
		}
		if _, seen := evs[f[0]+" "+f[1]]; !seen {
			evs[f[0]+" "+f[1]] = n
		}
	}
	return evs
}

// waitEvents waits until every event named has been written.
func (r *run) waitEvents(timeout time.Duration, names ...string) map[string]int64 {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		evs := r.readEvents()
		missing := ""
		for _, n := range names {
			if _, ok := evs[n]; !ok {
				missing = n
				break
			}
		}
		if missing == "" {
			return evs
		}
		select {
		case <-r.done:
			r.t.Fatalf("podvisor exited (code %d) before event %q\nevents: %v\nstdout:\n%s\nstderr:\n%s", r.code, missing, evs, r.stdout, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no event %q after %s\nevents: %v\nstdout:\n%s\nstderr:\n%s", missing, timeout, evs, r.stdout, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// before asserts that event a happened before event b.
func before(t *testing.T, evs map[string]int64, a, b string) {
	t.Helper()
	ta, oka := evs[a]
	tb, okb := evs[b]
	if !oka || !okb {
		t.Errorf("events %q or %q missing: %v", a, b, evs)
		return
	}
	if ta >= tb {
		t.Errorf("%q (%d) should come before %q (%d), %s later", a, ta, b, tb, time.Duration(ta-tb))
	}
}

func testdata(name string) string {
	p, _ := filepath.Abs(filepath.Join("testdata", name))
	return p
}

// needRoot skips a test that binds volumes in a mount namespace.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("this test binds volumes in a mount namespace and needs root")
		}
		t.Skip("needs root (mount namespace)")
	}
}
