package e2e

// Helpers of the fault-catalogue suite (docs/reliability.md).
// Every name is prefixed ff so it cannot collide with the shared harness or
// another file's helpers. The tests themselves are named TestFault_<ID>_...
// so that `go test -run TestFault ./test/e2e/` selects them.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// ffCLI is the outcome of one podvisor invocation run to completion.
type ffCLI struct {
	Code    int
	Elapsed time.Duration
	// CPU is the user and system time the command used: a bound on the
	// work done that waiting for a busy machine's CPUs does not inflate.
	CPU            time.Duration
	Stdout, Stderr string
}

// ffRunCLI runs podvisor with args in dir until it exits, failing the test
// if it is still running after scaled(timeout) (a hang is a failure).
func ffRunCLI(t testing.TB, dir string, timeout time.Duration, args ...string) ffCLI {
	t.Helper()
	res, err := ffRunCLIErr(dir, timeout, args...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ffRunCLIErr is ffRunCLI for goroutines other than the test's.
func ffRunCLIErr(dir string, timeout time.Duration, args ...string) (ffCLI, error) {
	return ffRunArgvErr(dir, timeout, append([]string{podvisorBin}, args...)...)
}

// ffRunArgvErr runs argv (podvisor, or a wrapper that execs it) like
// ffRunCLIErr.
func ffRunArgvErr(dir string, timeout time.Duration, argv ...string) (ffCLI, error) {
	args := argv[1:]
	ctx, cancel := context.WithTimeout(context.Background(), scaled(timeout))
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Dir = dir
	cmd.Env = testharness.Environ([]string{"PODVISOR_CONFIG"}, "E2E_DIR="+dir) // PODVISOR_CONTROL=off: tests run side by side
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	res := ffCLI{Elapsed: time.Since(start), Stdout: out.String(), Stderr: errb.String()}
	if ctx.Err() != nil {
		return res, fmt.Errorf("podvisor %s: still running after %v", strings.Join(args, " "), scaled(timeout))
	}
	if cmd.ProcessState == nil {
		return res, fmt.Errorf("podvisor %s: %w", strings.Join(args, " "), err)
	}
	res.Code = exitCode(cmd.ProcessState, err)
	res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return res, nil
}

// ffStartHTTP starts podvisor on a free loopback address, which children
// find in $E2E_ADDR, and waits until it serves.
func ffStartHTTP(t testing.TB, yaml string, opts ...option) *Run {
	t.Helper()
	addr := freeAddr(t)
	opts = append([]option{withArgs("--listen", addr), withEnv("E2E_ADDR=" + addr)}, opts...)
	r := startPodvisor(t, yaml, opts...)
	r.Addr = addr
	// Polled rather than read from the log: stdout may be redirected.
	eventually(t, 10*time.Second, func() bool {
		if r.Exited() {
			t.Fatalf("podvisor exited before serving\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		}
		code, _ := r.Get(t, "/livez")
		return code == http.StatusOK
	}, "podvisor does not serve on %s", addr)
	return r
}

// ffProc is one process of /status, including the reason podvisor gives.
type ffProc = testharness.ProcessStatus

// ffStatus is the /status document and its raw text.
type ffStatus struct {
	testharness.Status
	Raw string `json:"-"`
}

func (s ffStatus) proc(name string) ffProc { return s.Process(name) }

// ffGetStatus fetches /status; a failed request fails the test.
func ffGetStatus(t testing.TB, r *Run) ffStatus {
	t.Helper()
	var st ffStatus
	st.Raw = getJSON(t, r, "/status", &st)
	return st
}

// ffWaitStatus polls /status until cond holds.
func ffWaitStatus(t testing.TB, r *Run, timeout time.Duration, cond func(ffStatus) bool, what string) ffStatus {
	t.Helper()
	var st ffStatus
	eventually(t, timeout, func() bool {
		st = ffGetStatus(t, r)
		return cond(st)
	}, "%s; last /status: %s", what, ffLazy(func() string { return st.Raw }))
	return st
}

// ffLazy formats as its function's result when printed, so a timeout
// message built before polling shows the last state seen.
type ffLazy func() string

func (f ffLazy) String() string { return f() }

// ffMetric returns the value of one exact series of /metrics, and whether
// it is present.
func ffMetric(t testing.TB, r *Run, series string) (float64, bool) {
	t.Helper()
	code, body := r.Get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("/metrics: bad sample %q", line)
			}
			return f, true
		}
	}
	return 0, false
}

// ffCPU is the CPU time (user+system) pid has used so far.
func ffCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	d, err := ffCPUErr(pid)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ffCPUErr is ffCPU for a process that may be gone.
func ffCPUErr(pid int) (time.Duration, error) {
	st, err := readStat(pid)
	return st.CPU, err
}

// ffStartTime is when pid started, as time since boot (field 22 of
// /proc/PID/stat, in clock ticks of 10 ms).
func ffStartTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	st, err := readStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return st.Start
}

// ffStatusKiB reads a "NNN kB" field (VmRSS, VmHWM) of /proc/PID/status.
func ffStatusKiB(t testing.TB, pid int, key string) int64 {
	t.Helper()
	v, err := statusField(pid, key)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		t.Fatalf("%s of %d: %q", key, pid, v)
	}
	return n
}

// ffGone reports whether pid no longer exists or is a zombie.
func ffGone(pid int) bool {
	st, err := readStat(pid)
	return err != nil || st.State == 'Z'
}

// ffPidOf waits for exactly one process with marker in its argv and returns it.
func ffPidOf(t testing.TB, marker string, timeout time.Duration) int {
	t.Helper()
	var pid int
	eventually(t, timeout, func() bool {
		p := pidsWithArg(marker)
		if len(p) == 1 {
			pid = p[0]
		}
		return pid != 0
	}, "no single process with argument %q: %v", marker, ffLazy(func() string { return fmt.Sprint(pidsWithArg(marker)) }))
	return pid
}

// ffWriteFlags reports whether fd of pid is open for writing (fdinfo flags).
func ffWriteFlags(pid, fd int) (bool, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
	if err != nil {
		return false, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				return false, err
			}
			return flags&syscall.O_ACCMODE != syscall.O_RDONLY, nil
		}
	}
	return false, fmt.Errorf("no flags in fdinfo %d of %d", fd, pid)
}

// ffWrite writes a file under dir and returns its path.
func ffWrite(t testing.TB, dir, name string, data []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// ffRequireRoot skips a test that needs root (uid switching, cgroups).
func ffRequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// ffStopClean sends SIGTERM and expects exit 0 within timeout.
func ffStopClean(t testing.TB, r *Run, timeout time.Duration) time.Duration {
	t.Helper()
	r.Signal(syscall.SIGTERM)
	code, took := r.Wait(timeout)
	if code != 0 {
		t.Fatalf("podvisor exit code %d after SIGTERM, want 0\nstdout:\n%s\nstderr:\n%s", code, r.Stdout, r.Stderr)
	}
	return took
}

// ffq quotes a shell script as a YAML single-quoted scalar.
func ffq(script string) string {
	return "'" + strings.ReplaceAll(script, "'", "''") + "'"
}

// ffMarker returns a number unique to this call, usable as a sleep argument
// that identifies the process in /proc.
func ffMarker() string {
	return fmt.Sprintf("1002.%09d", rand.IntN(1e9))
}

// ffCgroup creates a fresh cgroup-v1 directory under controller (memory,
// pids) and removes it on cleanup, killing whatever is left in it; it skips
// the test when the hierarchy is not there or not writable.
func ffCgroup(t testing.TB, controller string) string {
	t.Helper()
	dir, err := ffTryCgroup(t, controller)
	if err != nil {
		t.Skip(err)
	}
	return dir
}

// ffTryCgroup is ffCgroup that reports instead of skipping.
func ffTryCgroup(t testing.TB, controller string) (string, error) {
	t.Helper()
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("a %s cgroup needs root", controller)
	}
	root := filepath.Join("/sys/fs/cgroup", controller)
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy: %w", controller, err)
	}
	dir := filepath.Join(root, fmt.Sprintf("podvisor-ff-%d-%d", os.Getpid(), rand.IntN(1e9)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create a %s cgroup: %w", controller, err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			for _, f := range strings.Fields(readFile(filepath.Join(dir, "cgroup.procs"))) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			err := os.Remove(dir)
			if err == nil || time.Now().After(deadline) {
				if err != nil {
					t.Errorf("remove cgroup %s: %v", dir, err)
				}
				return
			}
			time.Sleep(20 * time.Millisecond) // poll period while the killed processes are reaped
		}
	})
	return dir, nil
}
