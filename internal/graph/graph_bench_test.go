package graph

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchDAG returns n shuffled names where node i depends on two random
// earlier nodes (fewer near the start), so about 2n edges.
func benchDAG(n int) ([]string, []Edge) {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("proc-%d", i)
	}
	edges := make([]Edge, 0, 2*n)
	for i := 1; i < n; i++ {
		a := r.IntN(i)
		edges = append(edges, Edge{From: names[i], To: names[a], Cond: Ready})
		if b := r.IntN(i); b != a {
			edges = append(edges, Edge{From: names[i], To: names[b], Cond: Started})
		}
	}
	r.Shuffle(n, func(i, j int) { names[i], names[j] = names[j], names[i] })
	return names, edges
}

var benchSizes = []int{1_000, 10_000, 100_000}

// BenchmarkNew measures New followed by Levels, what config loading and the
// graph command do.
func BenchmarkNew(b *testing.B) {
	for _, n := range benchSizes {
		names, edges := benchDAG(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g, err := New(names, edges)
				if err != nil {
					b.Fatal(err)
				}
				if len(g.Levels()) == 0 {
					b.Fatal("no levels")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

// BenchmarkLongestPath measures the check command's teardown chain.
func BenchmarkLongestPath(b *testing.B) {
	for _, n := range benchSizes {
		names, edges := benchDAG(n)
		g, err := New(names, edges)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				g.LongestPath(func(string) int64 { return 1 })
			}
		})
	}
}
