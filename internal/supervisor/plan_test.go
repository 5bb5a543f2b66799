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
