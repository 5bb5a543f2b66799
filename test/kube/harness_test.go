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
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

var podvisorBin string

func TestMain(m *testing.M) {
	// The shared binary's directory is searchable by every user: one test
	// runs podvisor as nobody.
	testharness.Main(m, "kube tests", func(bin string, _ float64) error {
		podvisorBin = bin
		// A fat pod's entrypoint is "podvisor": the one just built.
		return os.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	})
}

// syncBuffer is a goroutine-safe output buffer.
type syncBuffer = testharness.Buffer

// run is one podvisor process.
type run struct {
	t              testing.TB
	dir, events    string
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed once code is set
	code           int
}

// start runs `podvisor ARGS...` with E2E_DIR and E2E_EVENTS set.
func start(t testing.TB, args ...string) *run {
	t.Helper()
	return startProg(t, podvisorBin, args...)
}

// startEnv is start with extra environment entries (which win).
func startEnv(t testing.TB, env []string, args ...string) *run {
	t.Helper()
	return startProgEnv(t, env, podvisorBin, args...)
}

// startProg runs PROG ARGS... (a wrapper that execs podvisor) the same way.
func startProg(t testing.TB, prog string, args ...string) *run {
	t.Helper()
	return startProgEnv(t, nil, prog, args...)
}

func startProgEnv(t testing.TB, env []string, prog string, args ...string) *run {
	t.Helper()
	r := &run{t: t, dir: t.TempDir(), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	r.events = filepath.Join(r.dir, "events")
	r.cmd = exec.Command(prog, args...)
	r.cmd.Dir = r.dir
	r.cmd.Env = append(testharness.Environ(nil, "E2E_DIR="+r.dir, "E2E_EVENTS="+r.events), env...)
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	p, err := testharness.Start(r.cmd)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-p.Done()
		r.code = p.Code()
		close(r.done)
	}()
	t.Cleanup(func() {
		if !p.KillTree(time.Minute) {
			t.Errorf("podvisor pid %d did not die after SIGKILL", p.Pid())
		}
		<-r.done
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

// readEvents reads the event file: "NAME EVENT" -> first NANOS. Lines that
// cannot be read are passed over.
func (r *run) readEvents() map[string]int64 {
	evs, _ := testharness.ReadEvents(r.events)
	return testharness.FirstTimes(evs)
}

// waitEvents waits until every event named has been written.
func (r *run) waitEvents(timeout time.Duration, names ...string) map[string]int64 {
	r.t.Helper()
	var evs map[string]int64
	missing := ""
	testharness.Poll(timeout, 20*time.Millisecond, func() bool {
		evs, missing = r.readEvents(), ""
		for _, n := range names {
			if _, ok := evs[n]; !ok {
				missing = n
				break
			}
		}
		if missing != "" {
			select {
			case <-r.done:
				r.t.Fatalf("podvisor exited (code %d) before event %q\nevents: %v\nstdout:\n%s\nstderr:\n%s", r.code, missing, evs, r.stdout, r.stderr)
			default:
			}
		}
		return missing == ""
	})
	if missing != "" {
		r.t.Fatalf("no event %q after %s\nevents: %v\nstdout:\n%s\nstderr:\n%s", missing, timeout, evs, r.stdout, r.stderr)
	}
	return evs
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
