package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Issue 35 item 2: a service that ends as its user meant it to. Without
// remain_after_exit it ends stopped and /readyz is 503 for good (a
// Kubernetes container that exited); with it, it is completed and ready.
func TestRemainAfterExitCountsAsReady(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		remain    bool
		state     string
		readyCode int
	}{
		{false, "stopped", http.StatusServiceUnavailable},
		{true, "completed", http.StatusOK},
	} {
		t.Run(c.state, func(t *testing.T) {
			t.Parallel()
			extra := ""
			if c.remain {
				extra = "\n    remain_after_exit: true"
			}
			r := ffStartHTTP(t, `
processes:
  seed:
    command: `+ffq(ev("seed", "start")+"; exit 0")+`
    restart: never`+extra+`
  app:
    command: `+ffq(ev("app", "start")+"; exec sleep 1000")+`
`)
			st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
				return s.proc("seed").State == c.state && s.proc("app").State == "running"
			}, "seed "+c.state)
			if got := st.proc("seed").Ready; got != c.remain {
				t.Errorf("seed ready %v in /status, want %v\n%s", got, c.remain, st.Raw)
			}
			if st.Ready != c.remain {
				t.Errorf("/status ready %v, want %v\n%s", st.Ready, c.remain, st.Raw)
			}
			if code, body := r.Get(t, "/readyz"); code != c.readyCode {
				t.Errorf("/readyz %d %q, want %d", code, body, c.readyCode)
			}
			ffStopClean(t, r, 10*time.Second)
		})
	}
}

// Issue 35 item 5: a oneshot that completes before its ready check passed
// is ready only once the check passes: the check is never skipped.
func TestOneshotReadyCheckRunsAfterCompletion(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  migrate:
    type: oneshot
    command: `+ffq(ev("migrate", "start")+"; exit 0")+`
    ready: {exec: 'test -e "$E2E_DIR/migrated"', interval: 50ms}
  app:
    command: `+ffq(ev("app", "start")+"; exec sleep 1000")+`
    depends_on: {migrate: ready}
`)
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.proc("migrate").State == "completed" }, "migrate completed")
	if p := st.proc("migrate"); p.Ready {
		t.Errorf("migrate ready in /status before its check passed: %+v", p)
	}
	// The check keeps failing: app waits, /readyz says why.
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		w := s.proc("app").WaitingFor
		return len(w) == 1 && w[0] == "migrate: ready"
	}, "app waiting for migrate: ready")
	if code, _ := r.Get(t, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d before migrate's check passed, want 503", code)
	}
	if _, ok := findEvent(r.ReadEvents(t), "app", "start"); ok {
		t.Fatal("app started before migrate's ready check passed")
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "migrated"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.WaitEvent(t, "app", "start", 10*time.Second)
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.Ready && s.proc("migrate").Ready }, "ready")
	ffStopClean(t, r, 10*time.Second)
}

// Issue 35 item 6: a job with a ready check is ready once the check passed
// while it runs; its dependents do not wait for its exit (which would end
// the run), and it counts in /readyz.
func TestJobReadyCheckHoldsWhileRunning(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  server:
    type: job
    command: `+ffq(ev("server", "start")+`; while ! test -e "$E2E_DIR/done"; do sleep 0.05; done`)+`
    ready: {exec: 'test -e "$E2E_DIR/up"', interval: 50ms}
  client:
    type: job
    command: `+ffq(ev("client", "start")+`; touch "$E2E_DIR/done"`)+`
    depends_on: {server: ready}
`)
	r.WaitEvent(t, "server", "start", 10*time.Second)
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		w := s.proc("client").WaitingFor
		return len(w) == 1 && w[0] == "server: ready"
	}, "client waiting for server: ready")
	if code, _ := r.Get(t, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d before the job's check passed, want 503", code)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "up"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.WaitEvent(t, "client", "start", 10*time.Second)
	// client completes, server sees done and completes: every job done.
	code, _ := r.Wait(20 * time.Second)
	wantCode(t, r, code, 0)
}

// Issue 35 item 4: a completed oneshot's stop.command runs at teardown,
// after its dependents exited and before its dependencies get their stop
// signal (systemd's ExecStop= of an active RemainAfterExit=yes oneshot).
func TestCompletedOneshotStopCommandAtTeardown(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  db:
    command: `+trapper("db")+`
  mount:
    type: oneshot
    depends_on: [db]
    command: `+shq(ev("mount", "start")+"; exit 0")+`
    stop: {command: ["sh", "-c", `+shq(ev("mount", "unmount"))+`]}
  app:
    depends_on: {mount: completed}
    command: `+trapper("app")+`
`)
	r.WaitEvent(t, "app", "start", 10*time.Second)
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(20 * time.Second)
	wantCode(t, r, code, 0)
	evs := r.ReadEvents(t)
	appExit, ok1 := findEvent(evs, "app", "exit")
	unmount, ok2 := findEvent(evs, "mount", "unmount")
	dbTerm, ok3 := findEvent(evs, "db", "term")
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("missing events (app exit %v, mount unmount %v, db term %v):\n%s", ok1, ok2, ok3, readFile(r.Events))
	}
	if !unmount.At.After(appExit.At) || !dbTerm.At.After(unmount.At) {
		t.Errorf("order app exit %v, unmount %v, db term %v: want app, then unmount, then db", appExit.At, unmount.At, dbTerm.At)
	}
}
