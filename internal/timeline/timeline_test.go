package timeline

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// diamond: db and cache start together; app waits for both; web waits for
// app. cache is the slow branch.
func diamond() []Proc {
	return []Proc{
		{Name: "cache", Type: "service"},
		{Name: "db", Type: "service"},
		{Name: "migrate", Type: "oneshot", DependsOn: []Dep{{Name: "db", Condition: "ready"}}},
		{Name: "app", Type: "service", DependsOn: []Dep{{Name: "cache", Condition: "ready"}, {Name: "migrate", Condition: "completed"}}},
		{Name: "web", Type: "service", DependsOn: []Dep{{Name: "app", Condition: "started"}}},
	}
}

// run records a start-up: name spawned at spawn ms, ready (or completed) at
// ready ms.
func run(r *Recorder, name string, spawn, ready int, oneshot bool) {
	r.Spawned(name, 1, at(spawn))
	r.Started(name, 1, 100+spawn, at(spawn+1))
	if oneshot {
		r.Exited(name, 1, 0, true, "", at(ready))
		return
	}
	r.Ready(name, 1, at(ready))
}

func TestCriticalChainNamesTheSlowBranch(t *testing.T) {
	r := New(diamond(), 0, t0)
	run(r, "cache", 0, 3000, false) // slow
	run(r, "db", 0, 200, false)
	run(r, "migrate", 200, 900, true)
	run(r, "app", 3000, 3500, false)
	run(r, "web", 3001, 3100, false) // ready before app: not the last
	d := r.Doc(at(4000))
	want := []Link{
		{Process: "cache", SpawnedAt: 0, ReadyAt: 3, TimeToReady: 3, Gates: "ready"},
		{Process: "app", SpawnedAt: 3, ReadyAt: 3.5, TimeToReady: 0.5},
	}
	if len(d.CriticalChain) != len(want) {
		t.Fatalf("chain %+v, want %+v", d.CriticalChain, want)
	}
	for i, l := range d.CriticalChain {
		w := want[i]
		if l.Process != w.Process || l.Gates != w.Gates || !near(l.SpawnedAt, w.SpawnedAt) || !near(l.ReadyAt, w.ReadyAt) || !near(l.TimeToReady, w.TimeToReady) {
			t.Errorf("link %d = %+v, want %+v", i, l, w)
		}
	}

	// The other branch slow instead: the chain goes through migrate and db.
	r = New(diamond(), 0, t0)
	run(r, "cache", 0, 100, false)
	run(r, "db", 0, 2000, false)
	run(r, "migrate", 2000, 2500, true)
	run(r, "app", 2500, 2600, false)
	run(r, "web", 2501, 2550, false)
	var names []string
	for _, l := range r.Doc(at(3000)).CriticalChain {
		names = append(names, l.Process+":"+l.Gates)
	}
	if got := join(names); got != "db:ready migrate:completed app:" {
		t.Errorf("chain %s, want db:ready migrate:completed app:", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestCriticalChainIsTheStartUps: a scheduled oneshot's run at its first
// tick, after the start-up, is not the end of the critical chain (issue 35,
// item 3: "critical chain: backup @5.00s"), nor after a reload.
func TestCriticalChainIsTheStartUps(t *testing.T) {
	procs := append(diamond(), Proc{Name: "backup", Type: "oneshot", Scheduled: true})
	for _, reload := range []bool{false, true} {
		r := New(procs, 0, t0)
		if reload {
			r = New(diamond(), 0, t0)
			r.Reconfigured(procs)
		}
		run(r, "cache", 0, 100, false)
		run(r, "db", 0, 200, false)
		run(r, "migrate", 200, 900, true)
		run(r, "app", 900, 1000, false)
		run(r, "web", 901, 950, false)
		run(r, "backup", 5000, 5100, true)
		var names []string
		for _, l := range r.Doc(at(6000)).CriticalChain {
			names = append(names, l.Process)
		}
		if got := join(names); got != "db migrate app" {
			t.Errorf("reload %v: chain %s, want db migrate app", reload, got)
		}
	}
}

func TestCriticalChainEmptyBeforeAnythingIsReady(t *testing.T) {
	r := New(diamond(), 0, t0)
	r.Spawned("db", 1, at(0))
	if c := r.Doc(at(10)).CriticalChain; c == nil || len(c) != 0 {
		t.Fatalf("chain %v, want empty (not null)", c)
	}
}

// TestShutdownReport: a chain web -> app -> db where app ignores its stop
// signal and is SIGKILLed; db has a stop.command that ends it.
func TestShutdownReport(t *testing.T) {
	procs := []Proc{
		{Name: "db", Type: "service"},
		{Name: "app", Type: "service", DependsOn: []Dep{{Name: "db", Condition: "ready"}}},
		{Name: "web", Type: "service", DependsOn: []Dep{{Name: "app", Condition: "ready"}}},
		{Name: "late", Type: "service"},
	}
	r := New(procs, 0, t0)
	for _, n := range []string{"db", "app", "web"} {
		run(r, n, 0, 10, false)
	}
	r.TeardownBegan("received SIGTERM", 30*time.Second, at(1000))
	r.StopRequested("web", 1, "teardown: received SIGTERM", at(1000))
	r.Signalled("web", 1, syscall.SIGTERM, at(1000))
	r.Signalled("web", 1, syscall.SIGCONT, at(1000))
	r.Exited("web", 1, 143, false, "", at(1100))
	r.StopRequested("app", 1, "teardown: received SIGTERM", at(1100))
	r.Signalled("app", 1, syscall.SIGTERM, at(1100))
	r.Signalled("app", 1, syscall.SIGKILL, at(11100))
	r.Exited("app", 1, 137, false, "", at(11105))
	r.StopRequested("db", 1, "teardown: received SIGTERM", at(11105))
	r.StopCommand("db", 1, false, nil, at(11105))
	r.Exited("db", 1, 0, true, "", at(11300))
	r.StopCommand("db", 1, true, errors.New("killed"), at(11301))

	mid := r.Doc(at(11200)).Shutdown
	if mid == nil || mid.Ended != nil || !near(mid.UsedSeconds, 10.2) {
		t.Fatalf("report while stopping: %+v", mid)
	}
	r.TeardownEnded(at(11400))
	sd := r.Doc(at(12000)).Shutdown
	if sd.Cause != "received SIGTERM" || !near(sd.BudgetSeconds, 30) || !near(sd.UsedSeconds, 10.4) || !near(sd.LeftSeconds, 19.6) {
		t.Errorf("report totals %+v", sd)
	}
	want := []struct {
		name, endedBy string
		killed        bool
		took          float64
	}{
		{"web", "signal", false, 0.1},
		{"app", "SIGKILL", true, 10.005},
		{"db", "stop.command", false, 0.195},
	}
	if len(sd.Processes) != len(want) {
		t.Fatalf("report processes %+v, want 3 (late never ran)", sd.Processes)
	}
	for i, w := range want {
		p := sd.Processes[i]
		if p.Process != w.name || p.EndedBy != w.endedBy || p.SIGKILLed != w.killed || p.StopSeconds == nil || !near(*p.StopSeconds, w.took) {
			t.Errorf("stop %d = %+v (took %v), want %+v", i, p, deref(p.StopSeconds), w)
		}
	}
	if sd.Processes[1].Signal != "SIGTERM" {
		t.Errorf("app's stop signal %q, want SIGTERM (SIGCONT and SIGKILL are not the stop signal)", sd.Processes[1].Signal)
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

// TestRingKeepsLastN: memory is bounded per process.
func TestRingKeepsLastN(t *testing.T) {
	r := New([]Proc{{Name: "flappy", Type: "service"}}, 3, t0)
	for g := uint64(1); g <= 10; g++ {
		r.Spawned("flappy", g, at(int(g)*10))
		r.Started("flappy", g, int(g), at(int(g)*10+1))
		r.Exited("flappy", g, 1, false, "", at(int(g)*10+5))
	}
	p := r.Doc(at(200)).Processes[0]
	if len(p.Incarnations) != 3 || p.Dropped != 7 {
		t.Fatalf("%d incarnations kept, %d dropped; want 3 and 7", len(p.Incarnations), p.Dropped)
	}
	for i, in := range p.Incarnations {
		if in.Generation != uint64(8+i) || in.Exited == nil {
			t.Errorf("kept incarnation %d: %+v, want generation %d with its exit", i, in, 8+i)
		}
	}
	// Events of a dropped incarnation are ignored, not misfiled.
	r.Ready("flappy", 2, at(500))
	for _, in := range r.Doc(at(600)).Processes[0].Incarnations {
		if in.Ready != nil {
			t.Errorf("generation %d got a late event of a dropped one", in.Generation)
		}
	}
	// Unknown names are ignored.
	r.Spawned("nope", 1, at(1))
}

// Issue 22 item 8: the report lists what the teardown had to stop, also
// what started after it began (the rest of a first wave whose launch
// failed), and the process whose failure began it (a start timeout: it
// exited just before the teardown began).
func TestShutdownReportListsLateStartsAndTheCause(t *testing.T) {
	r := New([]Proc{{Name: "slow", Type: "service"}, {Name: "a", Type: "service"}, {Name: "b", Type: "service"}}, 0, t0)
	run(r, "slow", 0, 10, false)
	r.StopRequested("slow", 1, "start timeout 2s exceeded", at(2000))
	r.Signalled("slow", 1, syscall.SIGTERM, at(2000))
	r.Exited("slow", 1, 143, false, "", at(2100))
	r.Spawned("a", 1, at(2101))
	r.TeardownBegan("slow: start timeout 2s exceeded", 30*time.Second, at(2102))
	r.TeardownCause("slow")
	r.Started("a", 1, 7, at(2103)) // launched in the step that began the teardown
	r.StopRequested("a", 1, "teardown", at(2104))
	r.Exited("a", 1, 143, false, "", at(2200))
	r.TeardownEnded(at(2201))
	sd := r.Doc(at(3000)).Shutdown
	if sd.Process != "slow" {
		t.Errorf("cause %q, want slow", sd.Process)
	}
	if len(sd.Processes) != 2 || sd.Processes[0].Process != "slow" || !sd.Processes[0].Cause || sd.Processes[1].Process != "a" || sd.Processes[1].Cause {
		t.Fatalf("report %+v, want slow (the cause), then a", sd.Processes)
	}
}
