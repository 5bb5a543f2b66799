package image

import (
	"strings"
	"testing"
	"time"
)

// restricted are the podman options that run a container the way Kubernetes
// with a restricted Pod Security Standard and OpenShift do: a random uid in
// group 0, a read-only root filesystem, no capabilities, no privilege gain.
var restricted = []string{"--user", "1000650000:0", "--read-only", "--cap-drop=ALL", "--security-opt", "no-new-privileges"}

// A config that needs nothing root can do: one process reports readiness
// over NOTIFY_SOCKET (python3 stands for sd_notify), the other over HTTP.
const unprivilegedConfig = `processes:
  notified:
    command: ["python3", "-c", "import os, socket, time\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.sendto(b'READY=1', os.environ['NOTIFY_SOCKET'])\nprint('notified', flush=True)\ntime.sleep(1e9)\n"]
    ready: {notify: systemd}
  web:
    command: ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1", "--directory", "/etc/podvisor"]
    depends_on: {notified: ready}
    ready: {http: "http://127.0.0.1:8000/procs.yaml"}
`

// TestRestrictedUser: with the restricted options (podman's --read-only
// keeps tmpfs on /tmp, /var/tmp and /run), notify: systemd and http
// readiness work as a random non-root uid.
func TestRestrictedUser(t *testing.T) {
	needImages(t)
	t.Parallel()
	dir := configDir(t, map[string]string{"procs.yaml": unprivilegedConfig})
	args := append(append([]string{}, restricted...), "-v", dir+":/etc/podvisor:ro", "-p", "127.0.0.1::9464", fatImage)
	c := run(t, "restricted", args...)
	c.waitReady(60 * time.Second)
	status, _ := c.exec("cat", "/proc/1/status")
	if !strings.Contains(status, "\nUid:\t1000650000\t1000650000\t1000650000\t1000650000\n") || !strings.Contains(status, "\nCapEff:\t0000000000000000\n") || !strings.Contains(status, "\nNoNewPrivs:\t1\n") {
		t.Errorf("PID 1 is not the restricted user:\n%s", status)
	}
	if out, code := c.exec("podvisor", "status"); code != 0 || !strings.Contains(out, "running, ready") {
		t.Errorf("podvisor status: %d\n%s", code, out)
	}
	must(t, "stop", c.name)
	if code := c.waitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d after podman stop, want 0", code)
	}
}

// TestNothingWritable: with no writable directory at all
// (--read-only-tmpfs=false) podvisor fails at once, saying it needs one
// writable directory and that TMPDIR names it; given one (a tmpfs, as an
// emptyDir would be in Kubernetes), it runs.
func TestNothingWritable(t *testing.T) {
	needImages(t)
	t.Parallel()
	dir := configDir(t, map[string]string{"procs.yaml": unprivilegedConfig})
	args := append(append([]string{}, restricted...), "--read-only-tmpfs=false", "-v", dir+":/etc/podvisor:ro")

	c := run(t, "readonly", append(args, fatImage)...)
	start := time.Now()
	if code := c.waitExit(20 * time.Second); code != 1 {
		t.Errorf("exit code %d with nothing writable, want 1", code)
	}
	t.Logf("nothing writable: exited after %v", time.Since(start).Round(10*time.Millisecond))
	logs := c.logs()
	for _, want := range []string{"read-only file system", "writable directory", "set TMPDIR"} {
		logIndex(t, logs, want)
	}
	if strings.Contains(logs, "notified |") {
		t.Error("a process was started although podvisor could not run")
	}

	c = run(t, "readonly-tmpdir", append(args, "--tmpfs", "/scratch:rw,mode=1777", "-e", "TMPDIR=/scratch", "-p", "127.0.0.1::9464", fatImage)...)
	c.waitReady(60 * time.Second)
}
