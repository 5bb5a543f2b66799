package examples

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNotify runs examples/notify: Redis reports readiness over
// NOTIFY_SOCKET, catalog.py by a newline on fd 3 after a warm-up, and api
// starts only once both did (it would crash without them). On SIGTERM api
// stops first.
func TestNotify(t *testing.T) {
	needPrograms(t, "redis-server", "redis-server")
	needPrograms(t, "python3", "python3")
	const warmup = time.Second // CATALOG_WARMUP below
	r := startExample(t, "notify", []string{"CACHE_PORT", "CATALOG_PORT", "API_PORT"}, "CATALOG_WARMUP=1")
	r.WaitReady(30 * time.Second)
	st := r.Status()

	// Redis's STATUS= text reaches /status only through the notify socket.
	if got := st["cache"].Status; got != "Ready to accept connections" {
		t.Errorf("cache notify STATUS %q, want Redis's %q", got, "Ready to accept connections")
	}
	// catalog is ready only once it wrote to fd 3, after its warm-up.
	cat := st["catalog"]
	if cat.StartedAt == nil || cat.ReadyAt == nil || cat.ReadyAt.Sub(*cat.StartedAt) < warmup {
		t.Errorf("catalog ready at %v, started at %v: less than its %v warm-up", cat.ReadyAt, cat.StartedAt, warmup)
	}
	r.Before(r.Index("catalog", "building the catalog"), r.mustEvent("ready", "catalog"), "catalog warms up before it is ready")
	// api started after both were ready, and never had to restart.
	api := st["api"]
	for _, dep := range []string{"cache", "catalog"} {
		if d := st[dep]; d.ReadyAt == nil || api.StartedAt == nil || api.StartedAt.Before(*d.ReadyAt) {
			t.Errorf("api started at %v, before %s was ready at %v", api.StartedAt, dep, d.ReadyAt)
		}
		r.Before(r.mustEvent("ready", dep), r.Index("api", ""), dep+" ready before api starts")
	}
	if api.Restarts != 0 {
		t.Errorf("api restarted %d times", api.Restarts)
	}
	want := "cache says PONG, catalog has 42 items"
	if code, body, err := get("http://127.0.0.1:" + r.Ports["API_PORT"] + "/"); err != nil || code != 200 || strings.TrimSpace(body) != want {
		t.Errorf("GET api: %d %q %v; want %q", code, body, err, want)
	}
	r.CheckNoZombies()

	r.Signal(syscall.SIGTERM)
	if code := r.Wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	apiExit := r.mustEvent("exited", "api")
	r.Before(apiExit, r.Index("cache", "Received SIGTERM"), "api exited before cache is stopped")
	r.Before(apiExit, r.mustEvent("exited", "catalog"), "api exits before catalog")
	r.CheckCleanTeardown()
	r.CheckGone()
}
