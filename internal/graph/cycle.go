package graph

import (
	"slices"
	"strings"
)

// CycleError reports dependency cycles. Each cycle is a path that starts and
// ends at its smallest name, following "depends on" edges, e.g.
// ["a", "b", "c", "a"] for a -> b -> c -> a. A self-dependency is ["a", "a"].
// There is one self-dependency entry per node that has one, plus one cycle
// (the shortest through its smallest name) for every strongly connected
// component of more than one node; breaking it may reveal another cycle in the
// same component. Cycles are sorted.
type CycleError struct {
	Cycles [][]string
}

func (e *CycleError) Error() string {
	var b strings.Builder
	b.WriteString("dependency cycle")
	if len(e.Cycles) > 1 {
		b.WriteString("s")
	}
	b.WriteString(": ")
	for i, c := range e.Cycles {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.Join(c, " -> "))
	}
	return b.String()
}

// components runs Tarjan's strongly connected components algorithm without
// recursion, so a 100k-long chain cannot exhaust the stack. Tarjan emits a
// component only after every component it reaches, so when the graph is
// acyclic the emission order lists dependencies before dependents and is
// returned as topo. Otherwise it returns the cycles, sorted.
func (g *Graph) components() (topo []int, cycles [][]string) {
	n := len(g.names)
	const unvisited = -1
	index := make([]int, n) // discovery number
	low := make([]int, n)
	comp := make([]int, n) // component number once emitted, else unvisited
	for i := range n {
		index[i], comp[i] = unvisited, unvisited
	}
	type frame struct{ v, next int } // next: position in g.deps
	var (
		calls   []frame
		stack   []int // Tarjan's stack of nodes in unfinished components
		counter int
		ncomp   int
	)
	topo = make([]int, 0, n)
	visit := func(v int) {
		index[v], low[v] = counter, counter
		counter++
		stack = append(stack, v)
		calls = append(calls, frame{v: v, next: g.depStart[v]})
	}
	for s := range n {
		if index[s] != unvisited {
			continue
		}
		visit(s)
		for len(calls) > 0 {
			top := len(calls) - 1
			v := calls[top].v
			if k := calls[top].next; k < g.depStart[v+1] {
				calls[top].next++
				w := g.deps[k].Node
				switch {
				case index[w] == unvisited:
					visit(w)
				case comp[w] == unvisited: // on the stack
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:top]
			if top > 0 {
				p := calls[top-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			// v is the root of a component: pop it off the stack.
			size := 0
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				comp[w] = ncomp
				topo = append(topo, w)
				size++
				if w == v {
					break
				}
			}
			if size > 1 {
				members := topo[len(topo)-size:]
				cycles = append(cycles, g.cycleThrough(slices.Min(members), comp))
			}
			ncomp++
		}
	}
	for v := range n {
		for _, a := range g.depsOf(v) {
			if a.Node == v {
				cycles = append(cycles, []string{g.names[v], g.names[v]})
			}
		}
	}
	if len(cycles) > 0 {
		slices.SortFunc(cycles, slices.Compare)
		return nil, cycles
	}
	return topo, nil
}

// cycleThrough returns the shortest cycle from s back to s within s's
// component, ignoring self-dependencies (reported on their own). The
// breadth-first search follows arcs in name order, so the result is
// deterministic. Its cost is bounded by the component's size.
func (g *Graph) cycleThrough(s int, comp []int) []string {
	parent := map[int]int{s: -1}
	queue := []int{s}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, a := range g.depsOf(v) {
			w := a.Node
			if w == v || comp[w] != comp[s] {
				continue
			}
			if w == s {
				var rev []string
				rev = append(rev, g.names[s])
				for u := v; u != -1; u = parent[u] {
					rev = append(rev, g.names[u])
				}
				slices.Reverse(rev)
				return rev
			}
			if _, seen := parent[w]; !seen {
				parent[w] = v
				queue = append(queue, w)
			}
		}
	}
	panic("graph: strongly connected component without a cycle") // unreachable
}
