// Package graph holds the process dependency DAG: construction, cycle detection,
// topological levels and teardown order. It is pure code: no files, processes,
// clocks or config types.
package graph

import (
	"fmt"
	"slices"
)

// Condition is what a dependent waits for on one of its dependencies.
type Condition uint8

const (
	// Started holds once the dependency has been exec'd.
	Started Condition = iota
	// Ready holds once the dependency's readiness check has succeeded.
	Ready
	// Completed holds once the dependency has exited with a success code.
	Completed
)

var conditionNames = [...]string{Started: "started", Ready: "ready", Completed: "completed"}

// String returns the word used in procs.yaml for c.
func (c Condition) String() string {
	if int(c) < len(conditionNames) {
		return conditionNames[c]
	}
	return "unknown"
}

// Edge says that From depends on To with condition Cond.
type Edge struct {
	From, To string
	Cond     Condition
}

// Arc is one edge seen from one of its ends: the node index at the other end
// and the condition. It lets the supervisor walk the graph by index without
// map lookups or allocations.
type Arc struct {
	Node int
	Cond Condition
}

// Graph is an acyclic dependency graph. It is immutable once New returns, so
// it is safe for concurrent use. Node indices are positions in Names, which is
// sorted, so index order is name order.
type Graph struct {
	names []string
	index map[string]int

	// Adjacency in compressed form: the arcs of node i are
	// deps[depStart[i]:depStart[i+1]], sorted by node index; likewise for
	// dependents.
	deps        []Arc
	depStart    []int
	dependents  []Arc
	dependStart []int

	level  []int
	levels [][]string // names per level, sorted
	topo   []int      // dependencies before dependents
}

// New builds the graph of names with edges, where Edge{From, To} means From
// depends on To. An edge naming an unknown node, a duplicate name, a repeated
// edge or an invalid condition is a plain error; self-dependencies and cycles
// yield a *CycleError listing every cycle. Apart from sorting the names it
// runs in time linear in nodes plus edges.
func New(names []string, edges []Edge) (*Graph, error) {
	g := &Graph{names: slices.Clone(names)}
	slices.Sort(g.names)
	n := len(g.names)
	g.index = make(map[string]int, n)
	for i, name := range g.names {
		if i > 0 && g.names[i-1] == name {
			return nil, fmt.Errorf("duplicate process %q", name)
		}
		g.index[name] = i
	}

	from := make([]int, len(edges))
	to := make([]int, len(edges))
	for k, e := range edges {
		f, ok := g.index[e.From]
		if !ok {
			return nil, fmt.Errorf("dependency %s -> %s: unknown process %q", e.From, e.To, e.From)
		}
		t, ok := g.index[e.To]
		if !ok {
			return nil, fmt.Errorf("dependency %s -> %s: unknown process %q", e.From, e.To, e.To)
		}
		if e.Cond > Completed {
			return nil, fmt.Errorf("dependency %s -> %s: invalid condition %d", e.From, e.To, e.Cond)
		}
		from[k], to[k] = f, t
	}

	// Two stable counting sorts (by To, then by From) order the edges by
	// (From, To) in linear time; a third by To then orders dependents by From.
	byTo := countingSort(n, identity(len(edges)), to)
	byFromTo := countingSort(n, byTo, from)
	g.deps, g.depStart = arcs(n, byFromTo, from, to, edges)
	byToFrom := countingSort(n, byFromTo, to)
	g.dependents, g.dependStart = arcs(n, byToFrom, to, from, edges)

	for i := range n {
		ds := g.depsOf(i)
		for j := 1; j < len(ds); j++ {
			if ds[j].Node == ds[j-1].Node {
				return nil, fmt.Errorf("process %q depends on %q more than once", g.names[i], g.names[ds[j].Node])
			}
		}
	}

	topo, cycles := g.components()
	if len(cycles) > 0 {
		return nil, &CycleError{Cycles: cycles}
	}
	g.topo = topo

	g.level = make([]int, n)
	maxLevel := -1
	for _, v := range topo {
		l := 0
		for _, a := range g.depsOf(v) {
			l = max(l, g.level[a.Node]+1)
		}
		g.level[v] = l
		maxLevel = max(maxLevel, l)
	}
	g.levels = group(g.names, g.level, maxLevel+1)
	return g, nil
}

func identity(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// countingSort returns the edge numbers in order stably sorted by key[edge],
// where every key is in [0, n).
func countingSort(n int, order, key []int) []int {
	start := make([]int, n+1)
	for _, k := range key {
		start[k+1]++
	}
	for i := range n {
		start[i+1] += start[i]
	}
	out := make([]int, len(order))
	for _, e := range order {
		out[start[key[e]]] = e
		start[key[e]]++
	}
	return out
}

// arcs builds the compressed adjacency of edges in order, which must be
// sorted by key: for each node k, the arcs to other[e] of the edges with
// key[e] == k.
func arcs(n int, order, key, other []int, edges []Edge) ([]Arc, []int) {
	list := make([]Arc, len(order))
	start := make([]int, n+1)
	for j, e := range order {
		list[j] = Arc{Node: other[e], Cond: edges[e].Cond}
		start[key[e]+1]++
	}
	for i := range n {
		start[i+1] += start[i]
	}
	return list, start
}

// group returns the names of each level, in index (name) order.
func group(names []string, level []int, count int) [][]string {
	if count == 0 {
		return nil
	}
	out := make([][]string, count)
	for i, l := range level {
		out[l] = append(out[l], names[i])
	}
	return out
}

func (g *Graph) depsOf(i int) []Arc {
	lo, hi := g.depStart[i], g.depStart[i+1]
	return g.deps[lo:hi:hi]
}

func (g *Graph) dependentsOf(i int) []Arc {
	lo, hi := g.dependStart[i], g.dependStart[i+1]
	return g.dependents[lo:hi:hi]
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.names) }

// Names returns every node name, sorted.
func (g *Graph) Names() []string { return slices.Clone(g.names) }

// Has reports whether name is a node.
func (g *Graph) Has(name string) bool {
	_, ok := g.index[name]
	return ok
}

// Index returns the index of name, its position in Names.
func (g *Graph) Index(name string) (int, bool) {
	i, ok := g.index[name]
	return i, ok
}

// Name returns the name of node i. It panics if i is out of range.
func (g *Graph) Name(i int) string { return g.names[i] }

// DependenciesIdx returns the arcs from node i to what it depends on, sorted
// by node index. The slice is shared: callers must not modify it.
func (g *Graph) DependenciesIdx(i int) []Arc { return g.depsOf(i) }

// DependentsIdx returns the arcs from node i to the nodes that depend on it,
// sorted by node index. The slice is shared: callers must not modify it.
func (g *Graph) DependentsIdx(i int) []Arc { return g.dependentsOf(i) }

// Dependencies returns the edges whose From is name, sorted by To; nil for an
// unknown name.
func (g *Graph) Dependencies(name string) []Edge {
	i, ok := g.index[name]
	if !ok {
		return nil
	}
	var out []Edge
	for _, a := range g.depsOf(i) {
		out = append(out, Edge{From: name, To: g.names[a.Node], Cond: a.Cond})
	}
	return out
}

// Dependents returns the edges whose To is name, sorted by From; nil for an
// unknown name.
func (g *Graph) Dependents(name string) []Edge {
	i, ok := g.index[name]
	if !ok {
		return nil
	}
	var out []Edge
	for _, a := range g.dependentsOf(i) {
		out = append(out, Edge{From: g.names[a.Node], To: name, Cond: a.Cond})
	}
	return out
}

// Level returns the start level of name: 0 without dependencies, else one
// more than the highest level among its dependencies. It returns -1 for an
// unknown name.
func (g *Graph) Level(name string) int {
	i, ok := g.index[name]
	if !ok {
		return -1
	}
	return g.level[i]
}

// Levels returns the names by start level, sorted within each level. Every
// node's dependencies are in earlier levels.
func (g *Graph) Levels() [][]string {
	if len(g.levels) == 0 {
		return nil
	}
	out := make([][]string, len(g.levels))
	for l, names := range g.levels {
		out[l] = slices.Clone(names)
	}
	return out
}

// ReverseLevels returns the names in teardown order, sorted within each
// level. Level 0 holds the nodes nothing depends on; a node's level is one
// more than the highest level among its dependents. It is not simply Levels
// reversed: a node stops as soon as its dependents have, just as the
// supervisor's teardown does, so an isolated node is in level 0.
func (g *Graph) ReverseLevels() [][]string {
	rev := make([]int, len(g.names))
	maxLevel := -1
	for k := len(g.topo) - 1; k >= 0; k-- {
		v := g.topo[k]
		l := 0
		for _, a := range g.dependentsOf(v) {
			l = max(l, rev[a.Node]+1)
		}
		rev[v] = l
		maxLevel = max(maxLevel, l)
	}
	return group(g.names, rev, maxLevel+1)
}

// LongestPath returns the heaviest dependency chain, where a chain's weight
// is the sum of weight over its nodes, and that total. The path runs from a
// node nothing depends on (stopped first in teardown) along dependencies down
// to a node without dependencies (stopped last). Among equally heavy chains
// it returns the one whose names compare smallest, element by element.
// weight is called once per node. An empty graph yields nil, 0.
func (g *Graph) LongestPath(weight func(name string) int64) (path []string, total int64) {
	n := len(g.names)
	if n == 0 {
		return nil, 0
	}
	// best[v] is the weight of the heaviest chain from v down to a root;
	// topo visits dependencies first, so theirs are known.
	best := make([]int64, n)
	for i, name := range g.names {
		best[i] = weight(name)
	}
	next := make([]int, n)
	for _, v := range g.topo {
		next[v] = -1
		var sub int64
		for _, a := range g.depsOf(v) {
			// Arcs are in name order and only a strictly heavier one wins,
			// so ties go to the smallest name.
			if next[v] == -1 || best[a.Node] > sub {
				next[v], sub = a.Node, best[a.Node]
			}
		}
		best[v] += sub
	}
	start := -1
	for i := range n {
		if len(g.dependentsOf(i)) == 0 && (start == -1 || best[i] > best[start]) {
			start = i
		}
	}
	for v := start; v != -1; v = next[v] {
		path = append(path, g.names[v])
	}
	return path, best[start]
}
