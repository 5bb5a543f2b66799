package release

import (
	"fmt"
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

// qemuTargets are the architectures run under qemu-user: arm64, and s390x as
// the big-endian one. The value is Debian's qemu-user-static binary.
var qemuTargets = map[string]string{
	"arm64": "qemu-aarch64-static",
	"s390x": "qemu-s390x-static",
}

// pureTests are unit tests that spawn no test binary of their own (under
// qemu-user each exec of the target binary is emulated again, which the
// helper-process tests of internal/logs and internal/proc make too slow):
// package and -run filter. The config parser and the graph whole, and the
// log formatter, which scans in SSE2 on amd64 and eight bytes at a time
// elsewhere (byte order matters there).
var pureTests = [][2]string{
	{"./internal/config/", ""},
	{"./internal/graph/", ""},
	{"./internal/logs/", "^(TestTextFormat|TestJSONFormat|TestJSONEscapesEverything|TestAppendJSONStringMatchesEncodingJSON|Fuzz.*)$"},
}

func needQemu(t *testing.T, arch string) string {
	t.Helper()
	needReleaseTests(t)
	qemu, err := exec.LookPath(qemuTargets[arch])
	if err != nil {
		t.Fatalf("%s: %v (apt-get install qemu-user-static; make test-release does)", qemuTargets[arch], err)
	}
	return qemu
}

// TestUnitTestsUnderQemu runs the pure packages' unit tests compiled for
// the target, each test binary under qemu-user (go test -exec).
func TestUnitTestsUnderQemu(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			qemu := needQemu(t, arch)
			for _, pt := range pureTests {
				args := []string{"test", "-count=1", "-exec", qemu, "-run", pt[1], pt[0]}
				cmd := exec.Command("go", args...)
				cmd.Dir = repoRoot(t)
				cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
				out, err := cmd.CombinedOutput()
				t.Logf("GOARCH=%s go %s\n%s", arch, strings.Join(args, " "), out)
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// dagConfig is a three-process DAG: a oneshot, a service that needs it
// completed, and a service that needs that one ready. The services are
// the host's /bin/sh and sleep; each records its SIGTERM in order, so
// that the teardown order (reverse dependency order) is visible.
func dagConfig(dir string, port int) string {
	service := func(name string) string {
		return fmt.Sprintf(`'trap "echo %[1]s >> %[2]s/order; exit 0" TERM; touch %[2]s/%[1]s.up; while :; do sleep 1 & wait $!; done'`, name, dir)
	}
	return fmt.Sprintf(`version: 1
listen: "127.0.0.1:%d"
shutdown_timeout: 30s
processes:
  prepare:
    type: oneshot
    command: "echo done > %[2]s/prepared"
  store:
    command: %[3]s
    depends_on: {prepare: completed}
    ready: {file: %[2]s/store.up}
  app:
    command: %[4]s
    depends_on: {store: ready}
    ready: {file: %[2]s/app.up}
`, port, dir, service("store"), service("app"))
}

// TestSmokeUnderQemu runs the release binary of the target under qemu-user:
// version names the architecture; check and graph read a three-process DAG;
// run, as PID 1 of a new PID namespace, brings it to ready (podvisor wait
// --ready, also the target binary), and a SIGTERM tears it down in reverse
// dependency order with exit code 0.
func TestSmokeUnderQemu(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("unshare (util-linux) is needed")
	}
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			qemu := needQemu(t, arch)
			dist := t.TempDir()
			release(t, repoRoot(t), dist, arch)
			bin := filepath.Join(dist, "podvisor-linux-"+arch)
			pv := func(args ...string) string {
				t.Helper()
				out, err := exec.Command(qemu, append([]string{bin}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("podvisor %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			if out := pv("version"); !strings.Contains(out, "linux/"+arch) || !strings.Contains(out, "v0.0.0-test") {
				t.Errorf("version does not name the version and linux/%s:\n%s", arch, out)
			}

			dir := t.TempDir()
			ports, err := testharness.FreePorts(1)
			if err != nil {
				t.Fatal(err)
			}
			port := ports[0]
			cfg := filepath.Join(dir, "procs.yaml")
			if err := os.WriteFile(cfg, []byte(dagConfig(dir, port)), 0o644); err != nil {
				t.Fatal(err)
			}
			if out := pv("check", "-c", cfg); !strings.Contains(out, "3 processes") {
				t.Errorf("check: %s", out)
			}
			if out := pv("graph", "-c", cfg); !strings.Contains(out, "store") || !strings.Contains(out, "app") {
				t.Errorf("graph: %s", out)
			}

			run := exec.Command("unshare", "--pid", "--fork", "--mount-proc", qemu, bin, "run", "-c", cfg,
				"--control", filepath.Join(dir, "control.sock"))
			run.Stdout, run.Stderr = os.Stdout, os.Stderr
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- run.Wait() }()
			t.Cleanup(func() { _ = run.Process.Kill() })

			pv("wait", "--ready", "127.0.0.1:"+strconv.Itoa(port), "--timeout", "5m")
			for _, f := range []string{"prepared", "store.up", "app.up"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("ready, but %v", err)
				}
			}

			// unshare --fork waits for its child, PID 1 of the namespace
			// (qemu running podvisor): the SIGTERM goes to that child.
			pid1 := childOf(t, run.Process.Pid)
			if err := syscall.Kill(pid1, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("podvisor run after SIGTERM: %v, want exit code 0", err)
				}
			case <-time.After(5 * time.Minute):
				t.Fatal("podvisor run did not exit within 5 min of SIGTERM")
			}
			order, _ := os.ReadFile(filepath.Join(dir, "order"))
			if string(order) != "app\nstore\n" {
				t.Errorf("stop order %q, want app then store (reverse dependency order)", order)
			}
		})
	}
}

// childOf returns the only child of pid (from /proc/PID/task/PID/children).
func childOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	if len(fields) != 1 {
		t.Fatalf("unshare (pid %d) has children %q, want one", pid, fields)
	}
	child, err := strconv.Atoi(fields[0])
	if err != nil {
		t.Fatal(err)
	}
	return child
}
