package supervisor

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/timeline"
)

// Issue 22 item 3: a renamed process (removed under its old name, added
// under the new one) must not start before the old incarnation has exited,
// or the new one finds its port taken and its readiness check answered by
// the old process. Every start of a reload waits for that reload's stops.
func TestReloadStartsWaitForItsStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const base = `
processes:
  db: {command: [db]}
  web: {command: [web], depends_on: [db]}
  api: {command: [api]}
`
		h := startOps(t, base, map[string]script{"web": {stopDelay: time.Second}})
		synctest.Wait()
		next := `
processes:
  db: {command: [db]}
  web2: {command: [web], depends_on: [db]}
  api: {command: [api, -v]}
`
		h.next.Store(&next)
		res := h.do("reload", control.Request{})
		if !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		h.mustHave("0s signal web TERM", "1s exit web 143", "1s start web2", "0s signal api TERM", "0s exit api 143", "1s start api")
		exit, start := h.index("exit web 143"), h.index("start web2")
		if exit < 0 || start < 0 || start < exit {
			t.Fatalf("web2 started before web exited:\n%s", strings.Join(h.f.events(), "\n"))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 5: two reloads that race apply in the order their files
// were read. The first reload reads v1 and is slow to parse it; meanwhile
// the file becomes v2 and a second reload begins. The last config applied
// must be v2, whatever order the parses finish in.
func TestRacingReloadsApplyInReadOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v0 := "processes:\n  a: {command: [a]}\n"
		v1 := "processes:\n  a: {command: [a, v1]}\n"
		v2 := "processes:\n  a: {command: [a, v2]}\n"
		f := newFake(nil)
		var file atomic.Pointer[string]
		file.Store(&v1)
		var loads atomic.Int32
		slow := make(chan struct{})
		load := func() (*config.Config, error) {
			data := *file.Load() // read the file...
			if loads.Add(1) == 1 {
				<-slow // ...then parse it slowly
			}
			return config.Parse("test.yaml", []byte(data), nil)
		}
		sup, err := New(Options{Config: parse(t, v0), Launcher: f, Load: load})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := make(chan Outcome, 1)
		sigs := make(chan os.Signal, 1)
		go func() { out <- sup.Run(ctx, sigs) }()
		synctest.Wait()

		done := make(chan control.Response, 2)
		go func() { done <- sup.Command(ctx, "reload", control.Request{}) }()
		synctest.Wait() // the first reload has read v1 and is parsing it
		file.Store(&v2)
		go func() { done <- sup.Command(ctx, "reload", control.Request{}) }()
		synctest.Wait()
		close(slow)
		<-done
		<-done
		synctest.Wait()
		if got := strings.Join(sup.cfg.Processes["a"].Command, " "); got != "a v2" {
			t.Fatalf("after two racing reloads the config in effect is %q, want the last file read (a v2)", got)
		}
		sigs <- syscall.SIGTERM
		<-out
	})
}

// Issue 22 item 4: a completed oneshot that a reload turns into a service
// is started as one: it was left "completed", never started, /readyz 503
// for good and podvisor start refused.
func TestReloadCompletedOneshotToService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, "processes:\n  init: {command: [init], type: oneshot}\n  web: {command: [web]}\n",
			map[string]script{"init": {exitAfter: time.Second, firstOnly: true}})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if st, _, _ := h.state("init"); st != "completed" {
			t.Fatalf("init: %s, want completed", st)
		}
		next := "processes:\n  init: {command: [init], type: service}\n  web: {command: [web]}\n"
		h.next.Store(&next)
		dry := h.do("reload", control.Request{DryRun: true})
		if !strings.Contains(strings.Join(dry.Plan, "\n"), "restart init: type changed") {
			t.Errorf("plan: %q", dry.Plan)
		}
		res := h.do("reload", control.Request{})
		if !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		if st, _, pid := h.state("init"); st != "running" || pid == 0 {
			t.Fatalf("init after the reload: %s pid %d, want running", st, pid)
		}
		if !h.sup.Snapshot().Ready {
			t.Fatalf("not ready: %v", h.sup.Snapshot().NotReady)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 6: every key of a process and every global key is seen by
// the reload plan. The test walks config.Process and config.Config by
// reflection, changes each field (a new field is walked as soon as it
// exists) and asserts the plan is not "unchanged". Fields that are not
// settings are listed, with why.
func TestPlanSeesEveryKey(t *testing.T) {
	notSettings := map[string]string{
		"Process.Name":             "the identity: a new name is a removal and an addition",
		"Process.Pos":              "where the key is in the file",
		"Process.DependsOn[0].Pos": "where the key is in the file",
		"Process.User.Spec":        "as written; the resolved uid, gid, groups, name and home are compared",
		"Process.Ready.Regexp":     "compiled from Target, which is compared",
		"Process.Live.Regexp":      "compiled from Target, which is compared",
		"Config.File":              "the path podvisor was started with, not a key",
		"Config.Dir":               "derived from File, not a key",
		"Config.Processes":         "walked field by field as Process",
		"Config.Names":             "derived from processes",
		"Config.Graph":             "derived from depends_on",
	}
	const src = `
control: /run/podvisor.sock
env: {G: g}
processes:
  db: {command: [db]}
  app:
    command: [app]
    depends_on: {db: {condition: started, restart: true}}
    env: {A: a}
    user: "1000:1000"
    ready: {tcp: "127.0.0.1:1"}
    live: {exec: [live]}
    start_timeout: 5s
    stop: {command: [hook]}
    oom_score_adj: 0
`
	base := parseCfg(t, src)
	seen := map[string]bool{}
	var walk func(path string, v reflect.Value, apply func() Plan)
	walk = func(path string, v reflect.Value, apply func() Plan) {
		if _, ok := notSettings[path]; ok {
			seen[path] = true
			return
		}
		check := func() {
			if p := apply(); !p.Changes() {
				t.Errorf("a change of %s is planned as unchanged: %q", path, p.Lines())
			}
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
				check()
				v.SetZero()
				return
			}
			saved := v.Interface()
			cp := reflect.New(v.Type().Elem())
			cp.Elem().Set(v.Elem())
			v.Set(cp) // mutate a copy: the base config shares nothing with it
			walk(path, cp.Elem(), apply)
			v.Set(reflect.ValueOf(saved))
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i), apply)
			}
		case reflect.Slice:
			saved := reflect.ValueOf(v.Interface())
			if v.Len() > 0 && v.Index(0).Kind() == reflect.Struct {
				cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(cp, v)
				v.Set(cp)
				walk(path+"[0]", v.Index(0), apply)
				v.Set(saved)
				return
			}
			v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, v.Len()+1), append(sliceElems(v), reflect.New(v.Type().Elem()).Elem())...))
			check()
			v.Set(saved)
		case reflect.String:
			old := v.String()
			v.SetString(old + "x")
			check()
			v.SetString(old)
		case reflect.Bool:
			v.SetBool(!v.Bool())
			check()
			v.SetBool(!v.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(v.Int() + 1)
			check()
			v.SetInt(v.Int() - 1)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(v.Uint() + 1)
			check()
			v.SetUint(v.Uint() - 1)
		default:
			t.Errorf("%s: kind %s not walked; teach the test or list it as not a setting", path, v.Kind())
		}
	}
	states := allRunning(base)
	// Every field of a process: a copy of app, changed in one place.
	app := *base.Processes["app"]
	next := *base
	next.Processes = map[string]*config.Process{"db": base.Processes["db"], "app": &app}
	walk("Process", reflect.ValueOf(&app).Elem(), func() Plan { return PlanReload(base, &next, states) })
	// Every global key.
	cfg := *base
	walk("Config", reflect.ValueOf(&cfg).Elem(), func() Plan { return PlanReload(base, &cfg, states) })
	for path := range notSettings {
		if !seen[path] {
			t.Errorf("%s is listed as not a setting but no longer exists", path)
		}
	}
}

func sliceElems(v reflect.Value) []reflect.Value {
	out := make([]reflect.Value, v.Len())
	for i := range out {
		out[i] = v.Index(i)
	}
	return out
}

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
		sup, err := New(Options{Config: cfg, Launcher: f, Checkers: f.checkers, Timeline: tl, Load: load})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &opsHarness{harness: &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		synctest.Wait()
		if res := h.do("reload", control.Request{}); !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		d := tl.Doc(time.Now())
		in := incarnation(t, d, "extra")
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

// Issue 22 item 9: podvisor stop X, then podvisor restart X while X's
// stop.command runs: X stops, then starts again at once (in the same step),
// and the stop's client must be answered then, not at its timeout.
func TestStopOvertakenByRestartAnswersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  a: {command: [a], stop: {command: [hook], timeout: 10s}}
`, map[string]script{"a": {hook: 3 * time.Second}})
		synctest.Wait()
		t0 := time.Now()
		done := make(chan control.Response, 1)
		go func() { done <- h.do("stop", names("a")) }()
		synctest.Wait() // the hook runs
		if res := h.do("restart", names("a")); !res.OK {
			t.Fatalf("restart: %s", resultText(res))
		}
		select {
		case r := <-done:
			if took := time.Since(t0); took > 3*time.Second {
				t.Fatalf("stop answered after %v (%s %s), want once a stopped (3s)", took, r.Error, resultText(r))
			}
			if r.OK || !strings.Contains(resultText(r), "started again") {
				t.Errorf("stop overtaken by restart: %s %s", r.Error, resultText(r))
			}
		case <-time.After(time.Minute):
			t.Fatal("the stop client still waits a minute after the restart")
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 13: a dependent restarted through restart: true counts the
// restart, like a policy or podvisor restart.
func TestRestartTrueDependentCountsRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  cache: {command: [cache]}
  app: {command: [app], depends_on: {cache: {condition: started, restart: true}}}
  idle: {command: [idle], depends_on: {app: {condition: started, restart: true}}}
`, map[string]script{"cache": {exitAfter: time.Second, exitCodes: []int{1, 0}, firstOnly: true}})
		time.Sleep(time.Minute)
		synctest.Wait()
		restarts := map[string]int{}
		for _, p := range h.sup.Snapshot().Processes {
			restarts[p.Name] = p.Restarts
		}
		if restarts["cache"] != 1 || restarts["app"] != 1 || restarts["idle"] != 1 {
			t.Errorf("restarts %v, want 1 each (cache crashed; app and idle followed it)", restarts)
		}
		if res := h.do("restart", names("cache")); !res.OK {
			t.Fatalf("restart: %s", resultText(res))
		}
		for _, p := range h.sup.Snapshot().Processes {
			restarts[p.Name] = p.Restarts
		}
		if restarts["cache"] != 2 || restarts["app"] != 2 || restarts["idle"] != 2 {
			t.Errorf("restarts %v after podvisor restart cache, want 2 each", restarts)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Restarts that followed a restart: true dependency count in restarts but
// not against the follower's own restart.limit.
func TestFollowedRestartsNotAgainstLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startOps(t, `
processes:
  cache: {command: [cache]}
  app:
    command: [app]
    depends_on: {cache: {condition: started, restart: true}}
    restart: {policy: on-failure, limit: 1}
`, map[string]script{"app": {exitAfter: 30 * time.Second, exitCodes: []int{0, 0, 1, 0}}})
		synctest.Wait()
		for range 2 { // app follows cache twice
			if res := h.do("restart", names("cache")); !res.OK {
				t.Fatalf("restart: %s", resultText(res))
			}
		}
		time.Sleep(time.Minute) // app's own first failure: restarted (limit 1)
		synctest.Wait()
		if n := strings.Count(strings.Join(h.f.events(), "\n"), "start app"); n != 4 {
			t.Fatalf("app started %d times, want 4:\n%s", n, strings.Join(h.f.events(), "\n"))
		}
		select {
		case o := <-h.out:
			t.Fatalf("podvisor ended: %+v (followed restarts counted against app's limit)", o)
		default:
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// Issue 22 item 14: a reload refused over the control socket is logged,
// with every error, as a refused SIGHUP reload is.
func TestRefusedReloadIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf lockedBuffer
		f := newFake(map[string]script{"web": {stopDelay: 5 * time.Second}})
		next := "processes:\n  db: {command: [db], type: servce}\n  app: {command: [app], depends_on: [dbb]}\n"
		load := func() (*config.Config, error) { return config.Parse("test.yaml", []byte(next), nil) }
		sup, err := New(Options{Config: parse(t, chain3), Launcher: f, Load: load,
			Log: slog.New(slog.NewTextHandler(&buf, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &opsHarness{harness: &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		synctest.Wait()
		if res := h.do("reload", control.Request{}); res.OK || len(res.Errors) != 2 {
			t.Fatalf("reload: %+v", res)
		}
		out := buf.String()
		if !strings.Contains(out, "reload (podvisor reload) refused") || !strings.Contains(out, "test.yaml:2:") || !strings.Contains(out, `unknown process \"dbb\"`) {
			t.Errorf("podvisor's log after a refused reload:\n%s", out)
		}
		h.sigs <- syscall.SIGTERM // web takes 5 s to stop
		synctest.Wait()
		if res := h.do("reload", control.Request{}); res.OK {
			t.Fatalf("reload during teardown: %+v", res)
		}
		if out := buf.String(); !strings.Contains(out, "refused during teardown") {
			t.Errorf("podvisor's log after a reload refused during teardown:\n%s", out)
		}
		h.wait(time.Minute)
	})
}

// A restart planned by a reload for a process in backoff waits for the
// reload's stops past its backoff's end without the loop spinning on that
// past instant (the invariant test found it).
func TestReloadRestartInBackoffWaitsForStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const base = `
processes:
  web: {command: [web]}
  api: {command: [api], restart: {policy: always, backoff: 5s}}
`
		f := newFake(map[string]script{"web": {stopDelay: 10 * time.Second}, "api": {exitAfter: time.Second, firstOnly: true}})
		next := strings.Replace(strings.Replace(base, "web:", "web2:", 1), "[api]", "[api, -v]", 1)
		load := func() (*config.Config, error) { return config.Parse("test.yaml", []byte(next), nil) }
		sup, err := New(Options{Config: parse(t, base), Launcher: f, Load: load})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var at time.Time
		steps := 0
		sup.afterStep = func(now time.Time) {
			if now.Equal(at) {
				if steps++; steps == 10000 {
					t.Error("the loop spins: 10000 steps at one instant")
					cancel()
				}
			} else {
				at, steps = now, 0
			}
		}
		h := &opsHarness{harness: &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}}
		go func() { h.out <- sup.Run(ctx, h.sigs) }()
		time.Sleep(2 * time.Second) // api exited at 1s: in backoff until 6s
		synctest.Wait()
		if st, _, _ := h.state("api"); st != "backoff" {
			t.Fatalf("api %s, want backoff", st)
		}
		if res := h.do("reload", control.Request{}); !res.OK {
			t.Fatalf("reload: %s %+v", resultText(res), res)
		}
		h.mustHave("12s exit web 143", "12s start web2", "12s start api")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
