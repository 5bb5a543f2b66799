package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// mustNew builds a graph or fails the test.
func mustNew(t *testing.T, names []string, edges []Edge) *Graph {
	t.Helper()
	g, err := New(names, edges)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// dep is shorthand for an edge with condition Ready.
func dep(from, to string) Edge { return Edge{From: from, To: to, Cond: Ready} }

// shapes used by several tables.
var (
	diamond = struct {
		names []string
		edges []Edge
	}{
		names: []string{"app", "db", "cache", "migrate", "lonely"},
		edges: []Edge{
			{From: "migrate", To: "db", Cond: Ready},
			{From: "app", To: "migrate", Cond: Completed},
			{From: "app", To: "cache", Cond: Ready},
			{From: "app", To: "db", Cond: Started},
		},
	}
)

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		edges []Edge
		want  string
	}{
		{"unknown from", []string{"a"}, []Edge{dep("x", "a")}, `dependency x -> a: unknown process "x"`},
		{"unknown to", []string{"a"}, []Edge{dep("a", "dbb")}, `dependency a -> dbb: unknown process "dbb"`},
		{"duplicate name", []string{"a", "b", "a"}, nil, `duplicate process "a"`},
		{"repeated edge", []string{"a", "b"}, []Edge{dep("a", "b"), {From: "a", To: "b", Cond: Started}}, `process "a" depends on "b" more than once`},
		{"invalid condition", []string{"a", "b"}, []Edge{{From: "a", To: "b", Cond: 9}}, `dependency a -> b: invalid condition 9`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(tt.names, tt.edges)
			if err == nil {
				t.Fatalf("New succeeded, want error %q", tt.want)
			}
			if g != nil {
				t.Errorf("New returned a graph with an error")
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
			var ce *CycleError
			if errors.As(err, &ce) {
				t.Errorf("error is a *CycleError, want a plain error")
			}
		})
	}
}

func TestLevels(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		edges   []Edge
		want    [][]string
		reverse [][]string
	}{
		{name: "empty"},
		{
			name:    "single",
			names:   []string{"a"},
			want:    [][]string{{"a"}},
			reverse: [][]string{{"a"}},
		},
		{
			name:    "independent sorted by name",
			names:   []string{"c", "a", "b"},
			want:    [][]string{{"a", "b", "c"}},
			reverse: [][]string{{"a", "b", "c"}},
		},
		{
			name:    "chain",
			names:   []string{"a", "b", "c"},
			edges:   []Edge{dep("a", "b"), dep("b", "c")},
			want:    [][]string{{"c"}, {"b"}, {"a"}},
			reverse: [][]string{{"a"}, {"b"}, {"c"}},
		},
		{
			// app is level 2 because of migrate, although db alone would
			// allow level 1; lonely stops at once in teardown.
			name:    "diamond",
			names:   diamond.names,
			edges:   diamond.edges,
			want:    [][]string{{"cache", "db", "lonely"}, {"migrate"}, {"app"}},
			reverse: [][]string{{"app", "lonely"}, {"cache", "migrate"}, {"db"}},
		},
		{
			name:  "fan in and out",
			names: []string{"root", "x1", "x2", "x3", "top"},
			edges: []Edge{
				dep("x1", "root"), dep("x2", "root"), dep("x3", "root"),
				dep("top", "x1"), dep("top", "x2"), dep("top", "x3"),
			},
			want:    [][]string{{"root"}, {"x1", "x2", "x3"}, {"top"}},
			reverse: [][]string{{"top"}, {"x1", "x2", "x3"}, {"root"}},
		},
		{
			// short's reverse level comes from its longest route to a leaf.
			name:    "uneven branches",
			names:   []string{"base", "short", "mid", "top"},
			edges:   []Edge{dep("short", "base"), dep("mid", "short"), dep("top", "mid"), dep("top", "base")},
			want:    [][]string{{"base"}, {"short"}, {"mid"}, {"top"}},
			reverse: [][]string{{"top"}, {"mid"}, {"short"}, {"base"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, tt.names, tt.edges)
			if got := g.Levels(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Levels() = %q, want %q", got, tt.want)
			}
			if got := g.ReverseLevels(); !reflect.DeepEqual(got, tt.reverse) {
				t.Errorf("ReverseLevels() = %q, want %q", got, tt.reverse)
			}
			for l, names := range tt.want {
				for _, name := range names {
					if got := g.Level(name); got != l {
						t.Errorf("Level(%q) = %d, want %d", name, got, l)
					}
				}
			}
		})
	}
}

func TestLevelsAreCopies(t *testing.T) {
	g := mustNew(t, []string{"a", "b"}, []Edge{dep("a", "b")})
	g.Levels()[0][0] = "changed"
	g.Names()[0] = "changed"
	if got := g.Levels(); got[0][0] != "b" {
		t.Errorf("Levels() after caller's change = %q", got)
	}
	if got := g.Names(); got[0] != "a" {
		t.Errorf("Names() after caller's change = %q", got)
	}
}

func TestAccessors(t *testing.T) {
	g := mustNew(t, diamond.names, diamond.edges)
	if got, want := g.Len(), 5; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	wantNames := []string{"app", "cache", "db", "lonely", "migrate"}
	if got := g.Names(); !reflect.DeepEqual(got, wantNames) {
		t.Errorf("Names() = %q, want %q", got, wantNames)
	}
	for i, name := range wantNames {
		if !g.Has(name) {
			t.Errorf("Has(%q) = false", name)
		}
		if got, ok := g.Index(name); !ok || got != i {
			t.Errorf("Index(%q) = %d, %v, want %d, true", name, got, ok, i)
		}
		if got := g.Name(i); got != name {
			t.Errorf("Name(%d) = %q, want %q", i, got, name)
		}
	}
	if g.Has("nope") {
		t.Errorf(`Has("nope") = true`)
	}
	if _, ok := g.Index("nope"); ok {
		t.Errorf(`Index("nope") found`)
	}
	if got := g.Level("nope"); got != -1 {
		t.Errorf(`Level("nope") = %d, want -1`, got)
	}
}

func TestDependenciesAndDependents(t *testing.T) {
	g := mustNew(t, diamond.names, diamond.edges)
	tests := []struct {
		name       string
		deps, dpts []Edge
	}{
		{
			name: "app",
			deps: []Edge{
				{From: "app", To: "cache", Cond: Ready},
				{From: "app", To: "db", Cond: Started},
				{From: "app", To: "migrate", Cond: Completed},
			},
		},
		{name: "cache", dpts: []Edge{{From: "app", To: "cache", Cond: Ready}}},
		{name: "db", dpts: []Edge{
			{From: "app", To: "db", Cond: Started},
			{From: "migrate", To: "db", Cond: Ready},
		}},
		{name: "lonely"},
		{
			name: "migrate",
			deps: []Edge{{From: "migrate", To: "db", Cond: Ready}},
			dpts: []Edge{{From: "app", To: "migrate", Cond: Completed}},
		},
		{name: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.Dependencies(tt.name); !reflect.DeepEqual(got, tt.deps) {
				t.Errorf("Dependencies(%q) = %v, want %v", tt.name, got, tt.deps)
			}
			if got := g.Dependents(tt.name); !reflect.DeepEqual(got, tt.dpts) {
				t.Errorf("Dependents(%q) = %v, want %v", tt.name, got, tt.dpts)
			}
			i, ok := g.Index(tt.name)
			if !ok {
				return
			}
			// The index views must agree with the named ones.
			var viaIdx []Edge
			for _, a := range g.DependenciesIdx(i) {
				viaIdx = append(viaIdx, Edge{From: tt.name, To: g.Name(a.Node), Cond: a.Cond})
			}
			if !reflect.DeepEqual(viaIdx, tt.deps) {
				t.Errorf("DependenciesIdx(%d) = %v, want %v", i, viaIdx, tt.deps)
			}
			viaIdx = nil
			for _, a := range g.DependentsIdx(i) {
				viaIdx = append(viaIdx, Edge{From: g.Name(a.Node), To: tt.name, Cond: a.Cond})
			}
			if !reflect.DeepEqual(viaIdx, tt.dpts) {
				t.Errorf("DependentsIdx(%d) = %v, want %v", i, viaIdx, tt.dpts)
			}
		})
	}
}

// randomDAG returns n nodes named in a shuffled order where each node depends
// on up to k random earlier ones, with the edges shuffled too.
func randomDAG(r *rand.Rand, n, k int) ([]string, []Edge) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	var edges []Edge
	for i := 1; i < n; i++ {
		seen := map[int]bool{}
		for range r.IntN(k + 1) {
			j := r.IntN(i)
			if !seen[j] {
				seen[j] = true
				edges = append(edges, Edge{From: names[i], To: names[j], Cond: Condition(r.IntN(3))})
			}
		}
	}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	return names, edges
}

// TestLevelsDefinition checks the level rules on random DAGs against their
// definitions, and that input order does not matter.
func TestLevelsDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		names, edges := randomDAG(r, 1+r.IntN(60), 3)
		g := mustNew(t, names, edges)

		level := map[string]int{}
		for l, ns := range g.Levels() {
			if !slices.IsSorted(ns) {
				t.Fatalf("trial %d: level %d not sorted: %q", trial, l, ns)
			}
			for _, n := range ns {
				level[n] = l
			}
		}
		rev := map[string]int{}
		for l, ns := range g.ReverseLevels() {
			if !slices.IsSorted(ns) {
				t.Fatalf("trial %d: reverse level %d not sorted: %q", trial, l, ns)
			}
			for _, n := range ns {
				rev[n] = l
			}
		}
		if len(level) != len(names) || len(rev) != len(names) {
			t.Fatalf("trial %d: levels hold %d and %d names, want %d", trial, len(level), len(rev), len(names))
		}
		for _, n := range names {
			want := 0
			for _, e := range g.Dependencies(n) {
				want = max(want, level[e.To]+1)
			}
			if level[n] != want {
				t.Fatalf("trial %d: %s in level %d, want %d", trial, n, level[n], want)
			}
			want = 0
			for _, e := range g.Dependents(n) {
				want = max(want, rev[e.From]+1)
			}
			if rev[n] != want {
				t.Fatalf("trial %d: %s in reverse level %d, want %d", trial, n, rev[n], want)
			}
		}

		// Input order must not matter.
		names2, edges2 := slices.Clone(names), slices.Clone(edges)
		slices.Reverse(names2)
		slices.Reverse(edges2)
		g2 := mustNew(t, names2, edges2)
		if !reflect.DeepEqual(g.Levels(), g2.Levels()) || !reflect.DeepEqual(g.ReverseLevels(), g2.ReverseLevels()) {
			t.Fatalf("trial %d: levels depend on input order", trial)
		}
	}
}

func TestLongestPath(t *testing.T) {
	tests := []struct {
		name      string
		names     []string
		edges     []Edge
		weights   map[string]int64 // missing names weigh 1
		wantPath  []string
		wantTotal int64
	}{
		{name: "empty", wantPath: nil, wantTotal: 0},
		{name: "single", names: []string{"a"}, weights: map[string]int64{"a": 7}, wantPath: []string{"a"}, wantTotal: 7},
		{
			name:      "chain from dependent to root",
			names:     []string{"a", "b", "c"},
			edges:     []Edge{dep("a", "b"), dep("b", "c")},
			wantPath:  []string{"a", "b", "c"},
			wantTotal: 3,
		},
		{
			// The heavy branch wins over the longer one.
			name:      "heaviest not longest",
			names:     diamond.names,
			edges:     diamond.edges,
			weights:   map[string]int64{"app": 10, "cache": 50, "db": 10, "migrate": 5, "lonely": 30},
			wantPath:  []string{"app", "cache"},
			wantTotal: 60,
		},
		{
			name:      "isolated heavy node",
			names:     diamond.names,
			edges:     diamond.edges,
			weights:   map[string]int64{"lonely": 100},
			wantPath:  []string{"lonely"},
			wantTotal: 100,
		},
		{
			name:      "longest when weights equal",
			names:     diamond.names,
			edges:     diamond.edges,
			wantPath:  []string{"app", "migrate", "db"},
			wantTotal: 3,
		},
		{
			// Two chains of equal weight: the one with smaller names wins,
			// at the start and at each branch.
			name:      "ties go to smaller names",
			names:     []string{"x", "y", "m", "n", "root"},
			edges:     []Edge{dep("y", "n"), dep("x", "n"), dep("x", "m"), dep("y", "m"), dep("m", "root"), dep("n", "root")},
			wantPath:  []string{"x", "m", "root"},
			wantTotal: 3,
		},
		{
			name:      "zero weights",
			names:     []string{"b", "a"},
			edges:     []Edge{dep("b", "a")},
			weights:   map[string]int64{"a": 0, "b": 0},
			wantPath:  []string{"b", "a"},
			wantTotal: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, tt.names, tt.edges)
			calls := map[string]int{}
			path, total := g.LongestPath(func(name string) int64 {
				calls[name]++
				if w, ok := tt.weights[name]; ok {
					return w
				}
				return 1
			})
			if !reflect.DeepEqual(path, tt.wantPath) || total != tt.wantTotal {
				t.Errorf("LongestPath() = %q, %d, want %q, %d", path, total, tt.wantPath, tt.wantTotal)
			}
			for name, n := range calls {
				if n != 1 {
					t.Errorf("weight(%q) called %d times, want once", name, n)
				}
			}
		})
	}
}

// TestLongestPathExhaustive compares LongestPath with a search of every
// teardown chain on small random DAGs with many ties.
func TestLongestPathExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		names, edges := randomDAG(r, 1+r.IntN(12), 2)
		g := mustNew(t, names, edges)
		weights := map[string]int64{}
		for _, n := range names {
			weights[n] = r.Int64N(4)
		}
		var bestPath []string
		var bestTotal int64
		var walk func(path []string, total int64)
		walk = func(path []string, total int64) {
			last := path[len(path)-1]
			deps := g.Dependencies(last)
			if len(deps) == 0 {
				if bestPath == nil || total > bestTotal || total == bestTotal && slices.Compare(path, bestPath) < 0 {
					bestPath, bestTotal = slices.Clone(path), total
				}
				return
			}
			for _, e := range deps {
				walk(append(path, e.To), total+weights[e.To])
			}
		}
		for _, n := range names {
			if len(g.Dependents(n)) == 0 {
				walk([]string{n}, weights[n])
			}
		}
		path, total := g.LongestPath(func(name string) int64 { return weights[name] })
		if !reflect.DeepEqual(path, bestPath) || total != bestTotal {
			t.Fatalf("trial %d: LongestPath() = %q, %d, want %q, %d\nedges %v\nweights %v",
				trial, path, total, bestPath, bestTotal, edges, weights)
		}
	}
}

// TestLongChain checks that a chain far deeper than any sane config neither
// exhausts the stack nor goes quadratic.
func TestLongChain(t *testing.T) {
	const n = 100_000
	names := make([]string, n)
	edges := make([]Edge, 0, n-1)
	for i := range names {
		names[i] = fmt.Sprintf("p%06d", i)
		if i > 0 {
			edges = append(edges, dep(names[i], names[i-1]))
		}
	}
	g := mustNew(t, names, edges)
	levels := g.Levels()
	if len(levels) != n {
		t.Fatalf("got %d levels, want %d", len(levels), n)
	}
	if levels[0][0] != names[0] || levels[n-1][0] != names[n-1] {
		t.Errorf("levels run %q .. %q, want %q .. %q", levels[0], levels[n-1], names[0], names[n-1])
	}
	path, total := g.LongestPath(func(string) int64 { return 2 })
	if len(path) != n || total != 2*n || path[0] != names[n-1] || path[n-1] != names[0] {
		t.Errorf("LongestPath() = %d names from %q to %q, total %d", len(path), path[0], path[len(path)-1], total)
	}
	if got := g.ReverseLevels(); len(got) != n || got[0][0] != names[n-1] {
		t.Errorf("ReverseLevels() has %d levels starting %q", len(got), got[0])
	}

	// Closing the chain makes one cycle through every node.
	_, err := New(names, append(edges, dep(names[0], names[n-1])))
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("New(closed chain) error = %v, want *CycleError", err)
	}
	if len(ce.Cycles) != 1 || len(ce.Cycles[0]) != n+1 {
		t.Fatalf("got %d cycles, first of length %d, want 1 of %d", len(ce.Cycles), len(ce.Cycles[0]), n+1)
	}
	c := ce.Cycles[0]
	if c[0] != names[0] || c[1] != names[n-1] || c[n-1] != names[1] || c[n] != names[0] {
		t.Errorf("cycle = %q .. %q, want p000000 -> p099999 .. p000001 -> p000000", c[:2], c[n-1:])
	}
	if !strings.HasPrefix(err.Error(), "dependency cycle: p000000 -> p099999 -> p099998") {
		t.Errorf("error starts %q", err.Error()[:60])
	}
}
