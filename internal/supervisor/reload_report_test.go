// Reloaded processes and failed start-ups in /timeline and the shutdown report.

package supervisor

import (
	"context"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/timeline"
)

// Issue 22 item 8: a process added by a reload shows in /timeline and in
// the shutdown report.
func TestTimelineKnowsReloadedProcesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		yml := "processes:\n  db: {command: [db]}\n"
		cfg := parse(t, yml)
		f := newFake(nil)
		tl := timeline.New(timeline.FromConfig(cfg), 0, time.Now())
		next := "processes:\n  db: {command: [db]}\n  extra: {command: [x], depends_on: {db: {condition: started}}}\n"
		load := func() (*config.Config, error) { return config.Parse("test.yaml", []byte(next), nil) }
		sup, err := New(Options{Config: cfg, Launcher: f, Checkers: f.checkers, OnEvent: tl.OnEvent, Load: load})
		watchTransitions(t, sup)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &opsHarness{harness: &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		synctest.Wait()
		if res := h.do("reload", Request{}); !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		d := tl.Doc(time.Now())
		in := incarnationIn(t, d, "extra")
		if in.Started == nil || in.Exited == nil {
			t.Errorf("extra's incarnation %+v", in)
		}
		var deps []timeline.Dep
		for _, p := range d.Processes {
			if p.Name == "extra" {
				deps = p.DependsOn
			}
		}
		if len(deps) != 1 || deps[0] != (timeline.Dep{Name: "db", Condition: "started"}) {
			t.Errorf("extra depends on %+v", deps)
		}
		if !reportNames(d, "extra", "db") {
			t.Errorf("shutdown report %+v, want extra and db", d.Shutdown)
		}
	})
}

// reportNames reports whether the shutdown report lists exactly names.
func reportNames(d timeline.Doc, names ...string) bool {
	if d.Shutdown == nil || len(d.Shutdown.Processes) != len(names) {
		return false
	}
	in := map[string]bool{}
	for _, p := range d.Shutdown.Processes {
		in[p.Process] = true
	}
	for _, n := range names {
		if !in[n] {
			return false
		}
	}
	return true
}

// Issue 22 item 8: the shutdown report of a teardown begun by a spawn
// failure in the first wave lists the process that could not start and
// the ones of its wave that did.
func TestShutdownReportAfterFirstWaveSpawnFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, tl := startObserved(t, "processes:\n  a: {command: [a]}\n  b: {command: [b]}\n  c: {command: [c]}\n",
			map[string]script{"b": {spawnErr: errNotFound}}, nil)
		if o := h.wait(time.Minute); o.Reason != ReasonFatal || o.Process != "b" {
			t.Fatalf("outcome %+v", o)
		}
		d := tl.Doc(time.Now())
		if !reportNames(d, "a", "b", "c") {
			t.Fatalf("shutdown report %+v, want a, b and c", d.Shutdown)
		}
		for _, p := range d.Shutdown.Processes {
			if p.Process == "b" && (p.EndedBy != "spawn failed" || !p.Cause) {
				t.Errorf("b in the report: %+v", p)
			}
		}
		if d.Shutdown.Process != "b" {
			t.Errorf("report names %q as the cause, want b", d.Shutdown.Process)
		}
	})
}
