package image

import (
	"strings"
	"testing"
	"time"
)

// psql runs a statement in the fat container's PostgreSQL.
func psql(c *container, sql string) (string, int) {
	return c.exec("sh", "-c", `"$STATE_DIR/pgbin/psql" -X -At -h 127.0.0.1 -p 15432 -U postgres -c "$1"`, "psql", sql)
}

// runFat starts the fat example on volume vol and waits until /readyz says
// 200, returning how long that took from `podman run`.
func runFat(t *testing.T, vol string, extra ...string) (*container, time.Duration) {
	t.Helper()
	start := time.Now()
	args := append([]string{"-v", vol + ":/var/lib/podvisor-state", "-p", "127.0.0.1::8090", "-p", "127.0.0.1::9464"}, extra...)
	c := run(t, "fat", append(args, fatImage)...)
	c.waitReady(90 * time.Second)
	return c, time.Since(start)
}

// stopOrdered runs `podman stop` and checks the teardown: exit code 0, the
// app stopped before PostgreSQL and Redis were signalled, PostgreSQL shut
// down cleanly. It returns how long `podman stop` took.
func stopOrdered(t *testing.T, c *container) time.Duration {
	t.Helper()
	start := time.Now()
	must(t, "stop", "-t", "40", c.name)
	took := time.Since(start)
	if code := c.waitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d after podman stop, want 0 (clean teardown)", code)
	}
	logs := c.logs()
	appExit := logIndex(t, logs, "msg=exited process=app code=0")
	for _, s := range []string{"teardown started", "app: SIGTERM"} {
		if i := logIndex(t, logs, s); i > appExit {
			t.Errorf("%q after the app exited", s)
		}
	}
	for _, s := range []string{"received fast shutdown request", "Received SIGTERM", "msg=exited process=redis", "msg=exited process=postgres code=0"} {
		if i := logIndex(t, logs, s); i < appExit {
			t.Errorf("%q before the app exited: the teardown order is wrong", s)
		}
	}
	logIndex(t, logs, "database system is shut down")
	logIndex(t, logs, `msg=exiting code=0`)
	return took
}

// TestFatImage runs the fat example as a user would: podvisor is PID 1, the
// app answers through a published port, `podman stop` tears down in order
// and PostgreSQL's data survives on the volume into a new container, which
// starts without crash recovery.
func TestFatImage(t *testing.T) {
	needImages(t)
	t.Parallel()
	vol := uniqueName("fat-vol")
	t.Cleanup(func() { podman("volume", "rm", "-f", vol) })

	c, ready := runFat(t, vol)
	t.Logf("podman run -> /readyz 200: %v", ready.Round(10*time.Millisecond))

	cmdline, _ := c.exec("cat", "/proc/1/cmdline")
	if argv := strings.Split(strings.TrimRight(cmdline, "\x00"), "\x00"); len(argv) < 2 || argv[0] != "podvisor" || argv[1] != "run" {
		t.Errorf("PID 1 is %q, want podvisor run", argv)
	}
	if out, code := c.exec("podvisor", "status"); code != 0 || !strings.Contains(out, "running, ready") {
		t.Errorf("podman exec podvisor status: exit %d\n%s", code, out)
	}
	if code, body := get(c.url(8090) + "/"); code != 200 || !strings.Contains(body, "hello from PostgreSQL (visit 1)") {
		t.Errorf("GET / on the app: %d %q", code, body)
	}
	logs := c.logs()
	for _, s := range []string{"postgres | ", "redis    | ", "app      | app: listening", "podvisor | "} {
		logIndex(t, logs, s)
	}
	if out, code := podman("healthcheck", "run", c.name); code != 0 {
		t.Errorf("podman healthcheck run: exit %d %s", code, out)
	}
	if out, code := psql(c, "INSERT INTO greetings VALUES (2, 'survivor')"); code != 0 {
		t.Fatalf("INSERT: %d %s", code, out)
	}

	took := stopOrdered(t, c)
	t.Logf("podman stop -> exited: %v", took.Round(10*time.Millisecond))
	must(t, "rm", c.name)

	// A new container on the same volume: the cluster exists, PostgreSQL
	// was shut down cleanly (no recovery), the row is there.
	c2, _ := runFat(t, vol)
	logs = c2.logs()
	logIndex(t, logs, "initdb: /var/lib/podvisor-state/pgdata exists, nothing to do")
	logIndex(t, logs, "database system was shut down at")
	for _, s := range []string{"was interrupted", "not properly shut down", "automatic recovery", "redo starts"} {
		if strings.Contains(logs, s) {
			t.Errorf("PostgreSQL ran crash recovery (%q) after podman stop:\n%s", s, tail(logs, 30))
		}
	}
	if out, code := psql(c2, "SELECT text FROM greetings WHERE id = 2"); code != 0 || strings.TrimSpace(out) != "survivor" {
		t.Errorf("the row written before podman stop: %d %q", code, out)
	}
	stopOrdered(t, c2)
}

// TestFatImageWithInit runs the fat example under podman's --init
// (catatonit is PID 1, podvisor its child and a subreaper): `podman stop`
// still gives the ordered teardown and exit code 0.
func TestFatImageWithInit(t *testing.T) {
	needImages(t)
	t.Parallel()
	vol := uniqueName("init-vol")
	t.Cleanup(func() { podman("volume", "rm", "-f", vol) })
	c, _ := runFat(t, vol, "--init")
	cmdline, _ := c.exec("cat", "/proc/1/cmdline")
	// podman mounts catatonit at /run/podman-init and runs the entrypoint
	// under it.
	if !strings.HasPrefix(cmdline, "/run/podman-init\x00") {
		t.Errorf("PID 1 under --init is %q, want podman's init", cmdline)
	}
	stopOrdered(t, c)
}
