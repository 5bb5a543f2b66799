package supervisor

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

func parseCfg(t testing.TB, src string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("procs.yaml", []byte(src), nil)
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	return cfg
}

func allRunning(cfg *config.Config) map[string]State {
	m := map[string]State{}
	for _, n := range cfg.Names {
		m[n] = Running
	}
	return m
}

func TestPlanReload(t *testing.T) {
	const base = `
processes:
  db: {command: [db]}
  cache: {command: [cache]}
  app:
    command: [app]
    depends_on: {db: ready, cache: {condition: ready, restart: true}}
  worker:
    command: [worker]
    depends_on: {app: {condition: started, restart: true}}
  web:
    command: [web]
    depends_on: [app]
`
	cases := []struct {
		name   string
		new    string
		states map[string]State // overrides of "all running"
		want   []string
		kept   int
		global []string
	}{
		{name: "no change", new: base, kept: 5},
		{name: "reformatted", new: `
processes:
  web: {command: ["web"], depends_on: {app: ready}}
  worker: {command: "worker", depends_on: {app: {restart: true, condition: started}}}
  app: {depends_on: {cache: {restart: true, condition: ready}, db: {condition: ready}}, command: [app]}
  cache: {command: [cache]}
  db: {command: [db]}
`, kept: 4, want: []string{"restart worker: command changed"}},
		{name: "leaf changed", new: strings.Replace(base, "command: [web]", "command: [web, -v]", 1),
			kept: 4, want: []string{"restart web: command changed"}},
		{name: "restart: true dependents carried transitively", new: strings.Replace(base, "cache: {command: [cache]}", "cache: {command: [cache2]}", 1),
			kept: 2, want: []string{
				"restart cache: command changed",
				"restart app: dependency cache restarts (restart: true)",
				"restart worker: dependency app restarts (restart: true)",
			}},
		{name: "restart without restart: true dependents", new: strings.Replace(base, "db: {command: [db]}", "db: {command: [db], env: {X: y}}", 1),
			kept: 4, want: []string{"restart db: environment changed"}},
		{name: "removed leaf and added process", new: strings.Replace(base, "  web:\n    command: [web]\n    depends_on: [app]\n", "  metrics: {command: [m], depends_on: [db]}\n", 1),
			kept: 4, want: []string{"stop web: removed from the config", "start metrics: added to the config"}},
		{name: "removed chain stops dependents first", new: `
processes:
  db: {command: [db]}
  cache: {command: [cache]}
`, kept: 2, want: []string{
			"stop web: removed from the config",
			"stop worker: removed from the config",
			"stop app: removed from the config",
		}},
		{name: "changed but operator-stopped stays stopped", new: strings.Replace(base, "command: [web]", "command: [web, -v]", 1),
			states: map[string]State{"web": Stopped}, kept: 4,
			want: []string{"update web: command changed; not restarted while stopped"}},
		{name: "dependent not active is not carried", new: strings.Replace(base, "cache: {command: [cache]}", "cache: {command: [cache2]}", 1),
			states: map[string]State{"app": Stopped}, kept: 4,
			want: []string{"restart cache: command changed"}},
		{name: "settings only", new: strings.Replace(base, "command: [web]", "command: [web]\n    stop: {timeout: 3s}", 1),
			kept: 4, want: []string{"update web: stop changed; applied without a restart"}},
		{name: "globals", new: "listen: \"off\"\nshutdown_timeout: 5s\nlog: {tail: 10}\n" + base, kept: 5,
			global: []string{
				"listen: :9464 -> off (applied now)",
				"log: format text, tail 200 -> format text, tail 10 (applied now)",
				"shutdown_timeout: 30s -> 5s (for the next teardown)",
			}},
		{name: "global env restarts every active process", new: "env: {TZ: UTC}\n" + base, kept: 0,
			want: []string{
				"restart cache: environment changed", "restart db: environment changed", "restart app: environment changed",
				"restart web: environment changed", "restart worker: environment changed",
			},
			global: []string{"env: changed (processes using it are restarted above)"}},
	}
	old := parseCfg(t, base)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			states := allRunning(old)
			for k, v := range c.states {
				states[k] = v
			}
			p := PlanReload(old, parseCfg(t, c.new), states)
			var got []string
			for _, s := range p.Steps {
				got = append(got, s.String())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
			if p.Unchanged != c.kept {
				t.Errorf("unchanged %d, want %d", p.Unchanged, c.kept)
			}
			if !reflect.DeepEqual(p.Global, c.global) {
				t.Errorf("global %q, want %q", p.Global, c.global)
			}
			if p.Changes() != (len(c.want)+len(c.global) > 0) {
				t.Errorf("Changes() = %v", p.Changes())
			}
		})
	}
}

// PlanReload must not modify its inputs (the loop keeps using old).
func TestPlanReloadIsPure(t *testing.T) {
	src := "processes:\n  a: {command: [a]}\n  b: {command: [b], depends_on: {a: {condition: started, restart: true}}}\n"
	old, new := parseCfg(t, src), parseCfg(t, strings.Replace(src, "[a]", "[a2]", 1))
	states := allRunning(old)
	before := fmt.Sprintf("%+v %+v %v", *old.Processes["a"], *new.Processes["b"], states)
	p1 := PlanReload(old, new, states)
	p2 := PlanReload(old, new, states)
	if !reflect.DeepEqual(p1, p2) {
		t.Fatalf("two calls differ: %v vs %v", p1, p2)
	}
	if after := fmt.Sprintf("%+v %+v %v", *old.Processes["a"], *new.Processes["b"], states); after != before {
		t.Fatal("PlanReload modified its inputs")
	}
}

// bigConfig has n processes in chains of 10, each depending on the previous
// one with restart: true every third link.
func bigConfig(n int, changed int) string {
	var b strings.Builder
	b.WriteString("processes:\n")
	for i := range n {
		cmd := "srv"
		if i == changed {
			cmd = "srv2"
		}
		fmt.Fprintf(&b, "  p%04d:\n    command: [%s, \"%d\"]\n    env: {PORT: \"%d\"}\n    ready: {tcp: \"127.0.0.1:%d\"}\n", i, cmd, i, 10000+i, 10000+i)
		if i%10 != 0 {
			fmt.Fprintf(&b, "    depends_on: {p%04d: {condition: ready, restart: %v}}\n", i-1, i%3 == 0)
		}
	}
	return b.String()
}

func TestPlanReloadBigTouchesOnlyTheChange(t *testing.T) {
	old := parseCfg(t, bigConfig(1000, -1))
	new := parseCfg(t, bigConfig(1000, 505)) // p0506 (restart: false) follows; p0507..9 not
	p := PlanReload(old, new, allRunning(old))
	if len(p.Steps) != 1 || p.Steps[0].Name != "p0505" || p.Unchanged != 999 {
		t.Fatalf("plan %v (unchanged %d), want only p0505", p.Steps, p.Unchanged)
	}
}

// BenchmarkPlanReload1000 is the target: a plan for 1,000 processes
// with one change in well under 10 ms.
func BenchmarkPlanReload1000(b *testing.B) {
	old := parseCfg(b, bigConfig(1000, -1))
	new := parseCfg(b, bigConfig(1000, 505))
	states := allRunning(old)
	b.ReportAllocs()
	for b.Loop() {
		p := PlanReload(old, new, states)
		if len(p.Steps) != 1 {
			b.Fatal(p.Steps)
		}
	}
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
		"Process.Ready.Shell":      "how the command was written; the argv, which is compared, says what runs",
		"Process.Live.Shell":       "how the command was written; the argv, which is compared, says what runs",
		"Process.Stop.Shell":       "how the command was written; the argv, which is compared, says what runs",
		"Process.Written":          "comments and origin for config.Write; nil in a loaded config",
		"Process.Profiles":         "which runs start the process, decided at the start (docs/configuration.md#profiles-and-subsets); a reload leaves a running process be",
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
