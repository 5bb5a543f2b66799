package examples

import (
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFatContainer runs examples/fat-container: PostgreSQL, Redis and an app
// start in dependency order as their own users, the app answers from both,
// a hung app is restarted by its liveness check, and on SIGTERM the app
// stops before both databases, which shut down cleanly.
func TestFatContainer(t *testing.T) {
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 {
		missing(t, "PostgreSQL not found in /usr/lib/postgresql: apt-get install postgresql")
	}
	needPrograms(t, "redis-server", "redis-server", "redis-cli")
	needPrograms(t, "python3", "python3")
	r := startExample(t, "fat-container", []string{"PG_PORT", "REDIS_PORT", "APP_PORT"})
	r.WaitReady(90 * time.Second)
	st := r.Status()
	app := "http://127.0.0.1:" + r.Ports["APP_PORT"]

	// The app reads PostgreSQL (the migration's row) and Redis (a counter).
	for _, want := range []string{"hello from PostgreSQL (visit 1)", "hello from PostgreSQL (visit 2)"} {
		if code, body, err := get(app + "/"); err != nil || code != 200 || strings.TrimSpace(body) != want {
			t.Fatalf("GET /: %d %q %v; want %q", code, body, err, want)
		}
	}

	// Start order, from podvisor's own messages and the first line each
	// process wrote.
	r.Before(r.mustEvent("completed", "prepare"), r.Index("initdb", ""), "prepare before initdb")
	r.Before(r.mustEvent("completed", "prepare"), r.Index("redis", ""), "prepare before redis")
	r.Before(r.mustEvent("completed", "initdb"), r.Index("postgres", ""), "initdb before postgres")
	r.Before(r.mustEvent("ready", "postgres"), r.Index("migrate", ""), "postgres ready before migrate")
	r.Before(r.mustEvent("completed", "migrate"), r.Index("app", ""), "migrate completed before the app")
	r.Before(r.mustEvent("ready", "redis"), r.Index("app", ""), "redis ready before the app")
	for _, dep := range []string{"postgres", "redis"} {
		if d, a := st[dep], st["app"]; d.ReadyAt == nil || a.StartedAt == nil || a.StartedAt.Before(*d.ReadyAt) {
			t.Errorf("app started at %v, before %s was ready at %v", a.StartedAt, dep, d.ReadyAt)
		}
	}

	// The databases run as their own users, as procs.yaml says.
	for name, account := range map[string]string{"postgres": "postgres", "redis": "redis"} {
		u, err := user.Lookup(account)
		if err != nil {
			t.Fatal(err)
		}
		pid := r.HostPid(st[name].Pid)
		if uids := strings.Fields(statusField(pid, "Uid")); len(uids) != 4 || uids[0] != u.Uid || uids[1] != u.Uid {
			t.Errorf("%s (pid %d) runs with uids %v, want %s", name, pid, uids, u.Uid)
		}
	}
	r.CheckNoZombies()

	// Liveness: a hung app (SIGSTOP) is stopped and started again, and
	// still has its data afterwards.
	before := r.Status()["app"]
	if err := syscall.Kill(r.HostPid(before.Pid), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool {
		a := r.Status()["app"]
		return a.Restarts > before.Restarts && a.Ready && a.Pid != before.Pid
	}, func() string {
		return fmt.Sprintf("the hung app was not restarted: %+v", r.Status()["app"])
	})
	r.mustEvent("liveness check failed: restarting", "app")
	if code, body, err := get(app + "/"); err != nil || code != 200 || !strings.Contains(body, "(visit 3)") {
		t.Errorf("GET / after the restart: %d %q %v; want visit 3", code, body, err)
	}

	r.Signal(syscall.SIGTERM)
	if code := r.Wait(40 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	// Reverse order: the app has exited before either database is told to
	// shut down; both shut down cleanly.
	appExit, _ := r.LastEvent("exited", "app")
	r.Before(appExit, r.Index("postgres", "received fast shutdown request"), "app exited before postgres stops")
	r.Before(appExit, r.Index("redis", "Received SIGTERM"), "app exited before redis stops")
	for _, name := range []string{"postgres", "redis"} {
		i, f := r.Event("exited", name)
		r.Before(appExit, i, "app exits before "+name)
		if f["code"] != "0" {
			t.Errorf("%s exit code %q, want 0", name, f["code"])
		}
	}
	if r.Index("postgres", "database system is shut down") < 0 {
		t.Error("postgres did not log a clean shutdown")
	}
	r.CheckCleanTeardown()
	r.CheckGone()
}
