package e2e

// Black-box tests of restart.rules against the real binary: a shutdown rule
// ends podvisor with the child's exit code, and restart-all replays the
// start-up (a oneshot again, dependency order) after a death by signal.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRules_ShutdownExitsWithTheCode(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  db:
    command: `+ffq("exec sleep 600")+`
  app:
    command: `+ffq(ev("app", "start")+"; exit 42")+`
    depends_on: [db]
    restart:
      policy: always
      rules: [{exit_codes: {in: [42]}, action: shutdown}]
`)
	code, _ := r.Wait(10 * time.Second)
	if code != 42 {
		t.Errorf("podvisor exit %d, want 42\nstderr:\n%s", code, r.Stderr)
	}
	if n := len(filterEvents(r.ReadEvents(t), "app", "start")); n != 1 {
		t.Errorf("app started %d times, want once", n)
	}
	if !strings.Contains(r.Stderr.String()+r.Stdout.String(), "rule 1 (shutdown)") {
		t.Errorf("the log does not name the rule\nstderr:\n%s", r.Stderr)
	}
}

func TestRules_RestartAllReplaysStartUp(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  init:
    type: oneshot
    command: `+ffq(ev("init", "start"))+`
  db:
    command: `+ffq(ev("db", "start")+"; exec sleep 600")+`
    depends_on: {init: completed}
    stop: {command: `+ffq(ev("db", "hook"))+`}
  app:
    # The first run dies by SIGSEGV; the second stays up.
    command: `+ffq(ev("app", "start")+`; if [ ! -e "$E2E_DIR/crashed" ]; then touch "$E2E_DIR/crashed"; kill -SEGV $$$$; fi; exec sleep 600`)+`
    depends_on: [db]
    restart:
      backoff: 100ms
      rules: [{signals: [SEGV], action: restart-all}]
`)
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		return s.proc("app").Restarts == 1 && s.proc("app").State == "running"
	}, "app not restarted by restart-all")
	// running in /status comes at the spawn; the child's event a moment
	// later. db's first shell may be stopped by the restart-all before it
	// writes its event (app can die first), so only the replay's order is
	// checked: init again, then db and app (one wave, either order).
	// Done when the replay's db and app have both written their start after
	// init's second run (counting db's starts is not enough: its first may
	// be the one seen).
	replayed := func(evs []event) bool {
		inits, db, app := 0, false, false
		for _, e := range evs {
			switch {
			case e.Name == "init" && e.Event == "start":
				inits++
			case inits == 2 && e.Name == "db" && e.Event == "start":
				db = true
			case inits == 2 && e.Name == "app" && e.Event == "start":
				app = true
			}
		}
		return db && app
	}
	var evs []event
	eventually(t, 20*time.Second, func() bool {
		evs = r.ReadEvents(t)
		return replayed(evs)
	}, "start-up not replayed: %v", ffLazy(func() string { return fmt.Sprint(evs) }))
	var order []string
	for _, e := range evs {
		order = append(order, e.Name+" "+e.Event)
	}
	got := strings.Join(order, ",")
	if !strings.HasSuffix(got, "init start,db start,app start") && !strings.HasSuffix(got, "init start,app start,db start") || strings.Contains(got, "hook") {
		t.Errorf("events %s: want the replay init, then db and app, and no stop hook", got)
	}
	st := ffGetStatus(t, r)
	if reason := st.proc("app").Reason; reason != "" && !strings.Contains(reason, "rule 1 (restart-all)") {
		t.Errorf("app reason %q", reason)
	}
	if v, ok := ffMetric(t, r, `podvisor_process_rule_matches_total{process="app",reason="rule 1 (restart-all)"}`); !ok || v != 1 {
		t.Errorf("rule_matches_total = %v (present %v), want 1", v, ok)
	}
	if code, body := r.Get(t, "/timeline"); code != 200 || !strings.Contains(body, `"exit_reason":"rule 1 (restart-all)"`) {
		t.Errorf("GET /timeline = %d, no exit_reason naming the rule:\n%s", code, body)
	}
	ffStopClean(t, r, 10*time.Second)
}
