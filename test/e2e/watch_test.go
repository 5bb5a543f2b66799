package e2e

// Black-box test of watch: against the real binary: changed files restart a
// service once per burst (debounce), ignored files do nothing, cascade
// restarts a dependent, and action "signal HUP" signals instead.

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWatch_RestartAndSignal(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  api:
    command: `+ffq(ev("api", "start")+"; exec sleep 600")+`
    watch: {paths: ["*.txt"], ignore: ["skip-*"], debounce: 200ms, cascade: true}
  web:
    command: `+ffq(ev("web", "start")+"; exec sleep 600")+`
    depends_on: [api]
  conf:
    command: `+ffq("trap '"+ev("conf", "hup")+"' HUP; "+ev("conf", "start")+"; while :; do sleep 0.05; done")+`
    watch: {paths: ["*.conf"], action: "signal HUP"}
`)
	eventually(t, 10*time.Second, func() bool {
		evs := r.ReadEvents(t)
		return len(filterEvents(evs, "web", "start")) == 1 && len(filterEvents(evs, "conf", "start")) == 1
	}, "not started")
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(r.Dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An ignored file, then a burst of three: one restart of api and,
	// with cascade, of web.
	write("skip-1.txt")
	write("a.txt")
	write("b.txt")
	write("a.txt")
	// web depends on api being started, not on api's shell having written
	// its event: wait for both.
	eventually(t, 10*time.Second, func() bool {
		evs := r.ReadEvents(t)
		return len(filterEvents(evs, "web", "start")) == 2 && len(filterEvents(evs, "api", "start")) >= 2
	}, "api and web not restarted: %v", r.ReadEvents(t))
	if n := len(filterEvents(r.ReadEvents(t), "api", "start")); n != 2 {
		t.Errorf("api started %d times, want 2 (one restart per burst, none for skip-1.txt)", n)
	}
	write("app.conf")
	eventually(t, 10*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "conf", "hup")) == 1 }, "conf got no SIGHUP")
	if n := len(filterEvents(r.ReadEvents(t), "conf", "start")); n != 1 {
		t.Errorf("conf started %d times, want 1 (signalled, not restarted)", n)
	}
	ffStopClean(t, r, 10*time.Second)
}
