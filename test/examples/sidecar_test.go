package examples

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSidecarFirst runs examples/sidecar-first: nginx must be ready before
// the app starts; every request through nginx reaches the app and is logged
// by both; on SIGTERM a request in flight still gets its answer, the app
// exits before nginx is even signalled, and nothing survives.
func TestSidecarFirst(t *testing.T) {
	needPrograms(t, "nginx", "nginx")
	needPrograms(t, "python3", "python3")
	r := startExample(t, "sidecar-first", []string{"PROXY_PORT", "APP_PORT"})
	r.WaitReady(30 * time.Second)
	proxy := "http://127.0.0.1:" + r.Ports["PROXY_PORT"]

	// Gating: podvisor saw nginx ready before the app wrote anything, and
	// started the app no earlier than that.
	r.Before(r.mustEvent("ready", "nginx"), r.WaitIndex("app", "listening on", 5*time.Second), "nginx ready before the app starts")
	st := r.Status()
	if nginx, app := st["nginx"], st["app"]; nginx.ReadyAt == nil || app.StartedAt == nil || app.StartedAt.Before(*nginx.ReadyAt) {
		t.Errorf("app started at %v, before nginx was ready at %v", app.StartedAt, nginx.ReadyAt)
	}

	// Nothing lost from the logs: each request shows once in nginx's access
	// log and once in the app's log.
	const n = 20
	for i := range n {
		code, body, err := get(fmt.Sprintf("%s/?n=%d", proxy, i))
		if err != nil || code != 200 || !strings.HasPrefix(body, "hello from app") {
			t.Fatalf("request %d through nginx: %d %q %v", i, code, body, err)
		}
	}
	for i := range n {
		access := fmt.Sprintf(`"GET /?n=%d HTTP/1.1" 200`, i)
		app := fmt.Sprintf("app: GET /?n=%d (forwarded for 127.0.0.1)", i)
		eventually(t, 5*time.Second, func() bool { return r.count("nginx", access) == 1 && r.count("app", app) == 1 },
			func() string {
				return fmt.Sprintf("request %d: %d access log lines, %d app lines; want 1 each", i, r.count("nginx", access), r.count("app", app))
			})
	}
	r.CheckNoZombies()

	// A slow request in flight when SIGTERM arrives still gets its answer:
	// the app drains it while nginx is still there to pass it back.
	type answer struct {
		code int
		body string
		err  error
	}
	slow := make(chan answer, 1)
	go func() {
		code, body, err := get(proxy + "/slow?seconds=2")
		slow <- answer{code, body, err}
	}()
	r.WaitIndex("app", "GET /slow", 10*time.Second)
	r.Signal(syscall.SIGTERM)
	if code := r.Wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	select {
	case a := <-slow:
		if a.err != nil || a.code != 200 || !strings.HasPrefix(a.body, "hello from app") {
			t.Errorf("request in flight at SIGTERM: %d %q %v", a.code, a.body, a.err)
		}
	case <-time.After(scaled(10 * time.Second)):
		t.Error("request in flight at SIGTERM got no answer")
	}

	// Reverse order: the app has exited before nginx gets its SIGQUIT.
	appExit, f := r.Event("exited", "app")
	if f["code"] != "0" {
		t.Errorf("app exit code %q, want 0 (it drains and exits on SIGTERM)", f["code"])
	}
	r.Before(r.Index("app", "finishing the requests in flight"), r.Index("app", "app: stopped"), "app drains before it stops")
	r.Before(appExit, r.Index("nginx", "signal 3 (SIGQUIT) received"), "app exited before nginx is stopped")
	nginxExit, f := r.Event("exited", "nginx")
	if f["code"] != "0" {
		t.Errorf("nginx exit code %q, want 0", f["code"])
	}
	r.Before(appExit, nginxExit, "app exits before nginx")
	r.CheckCleanTeardown()
	r.CheckGone()
}

// mustEvent returns the index of podvisor's first message msg about
// process, failing the test if there is none.
func (r *Run) mustEvent(msg, process string) int {
	r.t.Helper()
	i, _ := r.Event(msg, process)
	if i < 0 {
		r.t.Fatalf("podvisor never logged %q for %s", msg, process)
	}
	return i
}

// count returns the number of lines of proc containing sub.
func (r *Run) count(proc, sub string) int {
	n := 0
	for _, l := range r.Lines() {
		if l.Proc == proc && strings.Contains(l.Text, sub) {
			n++
		}
	}
	return n
}
