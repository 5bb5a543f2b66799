package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestCycles(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		edges   []Edge
		want    [][]string
		wantMsg string
	}{
		{
			name:    "self loop",
			names:   []string{"a", "b"},
			edges:   []Edge{dep("b", "a"), dep("a", "a")},
			want:    [][]string{{"a", "a"}},
			wantMsg: "dependency cycle: a -> a",
		},
		{
			name:    "two-cycle starts at smallest name",
			names:   []string{"web", "api", "db"},
			edges:   []Edge{dep("web", "api"), dep("api", "web"), dep("api", "db")},
			want:    [][]string{{"api", "web", "api"}},
			wantMsg: "dependency cycle: api -> web -> api",
		},
		{
			name:    "three-cycle rotated to smallest name",
			names:   []string{"c", "b", "a"},
			edges:   []Edge{dep("c", "a"), dep("b", "c"), dep("a", "b")},
			want:    [][]string{{"a", "b", "c", "a"}},
			wantMsg: "dependency cycle: a -> b -> c -> a",
		},
		{
			name:  "two disjoint cycles, sorted",
			names: []string{"x", "y", "z", "a", "b", "ok"},
			edges: []Edge{
				dep("x", "y"), dep("y", "z"), dep("z", "x"),
				dep("b", "a"), dep("a", "b"),
				dep("ok", "a"), dep("x", "ok"),
			},
			want:    [][]string{{"a", "b", "a"}, {"x", "y", "z", "x"}},
			wantMsg: "dependency cycles: a -> b -> a; x -> y -> z -> x",
		},
		{
			// a depends on both b and c; both lead back, the direct one
			// is shorter.
			name:    "shortest cycle through smallest name",
			names:   []string{"a", "b", "c", "d"},
			edges:   []Edge{dep("a", "b"), dep("b", "d"), dep("d", "a"), dep("a", "c"), dep("c", "a")},
			want:    [][]string{{"a", "c", "a"}},
			wantMsg: "dependency cycle: a -> c -> a",
		},
		{
			// A self-dependency inside a larger cycle is reported on
			// its own, besides the larger cycle.
			name:    "self loop inside a cycle",
			names:   []string{"a", "b"},
			edges:   []Edge{dep("a", "a"), dep("a", "b"), dep("b", "a"), dep("b", "b")},
			want:    [][]string{{"a", "a"}, {"a", "b", "a"}, {"b", "b"}},
			wantMsg: "dependency cycles: a -> a; a -> b -> a; b -> b",
		},
		{
			name:  "names with dots and dashes",
			names: []string{"db.main", "cache-1"},
			edges: []Edge{dep("db.main", "cache-1"), {From: "cache-1", To: "db.main", Cond: Completed}},
			want:  [][]string{{"cache-1", "db.main", "cache-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(tt.names, tt.edges)
			var ce *CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("New error = %v, want *CycleError", err)
			}
			if g != nil {
				t.Errorf("New returned a graph with a cycle")
			}
			if !reflect.DeepEqual(ce.Cycles, tt.want) {
				t.Errorf("Cycles = %q, want %q", ce.Cycles, tt.want)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("Error() = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

// TestCycleHiddenInLargeGraph hides a three-cycle among 500 nodes: the cycle
// depends on part of a random DAG and another part depends on it, so many
// nodes reach it without being on it.
func TestCycleHiddenInLargeGraph(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	names, edges := randomDAG(r, 497, 3)
	cycle := []string{"svc.b", "svc-c", "svc.a"}
	names = append(names, cycle...)
	edges = append(edges, dep("svc.a", "svc.b"), dep("svc.b", "svc-c"), dep("svc-c", "svc.a"))
	for i, c := range cycle {
		edges = append(edges, dep(c, fmt.Sprintf("p%d", 10*i)))  // p0, p10, p20
		edges = append(edges, dep(fmt.Sprintf("p%d", 490+i), c)) // p490.. depend on it
		edges = append(edges, Edge{From: fmt.Sprintf("p%d", 400+i), To: c, Cond: Completed})
	}
	want := [][]string{{"svc-c", "svc.a", "svc.b", "svc-c"}}
	for trial := range 3 {
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
		_, err := New(names, edges)
		var ce *CycleError
		if !errors.As(err, &ce) {
			t.Fatalf("trial %d: New error = %v, want *CycleError", trial, err)
		}
		if !reflect.DeepEqual(ce.Cycles, want) {
			t.Fatalf("trial %d: Cycles = %q, want %q", trial, ce.Cycles, want)
		}
	}
}

// TestCyclesAreValid adds random back edges to random DAGs and checks every
// reported cycle is a real cycle that starts at its smallest name, that
// every node on some cycle is in exactly one reported strongly connected
// component, and that graphs without back edges have none.
func TestCyclesAreValid(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 100 {
		names, edges := randomDAG(r, 2+r.IntN(40), 2)
		for range r.IntN(4) {
			a, b := names[r.IntN(len(names))], names[r.IntN(len(names))]
			edges = append(edges, dep(a, b), dep(b, a))
		}
		edges = dedupe(edges)
		_, err := New(names, edges)
		var ce *CycleError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("trial %d: New error = %v", trial, err)
		}
		if hasCycle(names, edges) != (ce != nil) {
			t.Fatalf("trial %d: cycle reported = %v, want %v", trial, ce != nil, hasCycle(names, edges))
		}
		if ce == nil {
			continue
		}
		has := map[[2]string]bool{}
		for _, e := range edges {
			has[[2]string{e.From, e.To}] = true
		}
		for _, c := range ce.Cycles {
			if len(c) < 2 || c[0] != c[len(c)-1] {
				t.Fatalf("trial %d: %q is not a closed path", trial, c)
			}
			seen := map[string]bool{}
			for i := 1; i < len(c); i++ {
				if !has[[2]string{c[i-1], c[i]}] {
					t.Fatalf("trial %d: cycle %q uses missing edge %s -> %s", trial, c, c[i-1], c[i])
				}
				if c[i] < c[0] || seen[c[i]] {
					t.Fatalf("trial %d: cycle %q does not start at its smallest name or repeats one", trial, c)
				}
				seen[c[i]] = true
			}
		}
	}
}

func dedupe(edges []Edge) []Edge {
	seen := map[[2]string]bool{}
	var out []Edge
	for _, e := range edges {
		k := [2]string{e.From, e.To}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// hasCycle is a slow, obviously correct reference: repeatedly remove nodes
// without dependencies; a cycle remains if any node cannot be removed.
func hasCycle(names []string, edges []Edge) bool {
	left := map[string]bool{}
	for _, n := range names {
		left[n] = true
	}
	for changed := true; changed; {
		changed = false
		for n := range left {
			free := true
			for _, e := range edges {
				if e.From == n && left[e.To] {
					free = false
					break
				}
			}
			if free {
				delete(left, n)
				changed = true
			}
		}
	}
	return len(left) > 0
}
