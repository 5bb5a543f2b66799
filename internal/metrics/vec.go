package metrics

import (
	"slices"
	"strings"
	"sync"
)

// CounterVec is a counter family with labels. Safe for concurrent use; an
// update holds a short lock and never blocks on a scrape's writing.
type CounterVec struct {
	name, help string
	labels     []string

	mu     sync.Mutex
	series map[string]*counterSeries
}

type counterSeries struct {
	values []string
	n      float64
}

// NewCounterVec returns a counter family whose series are named by labels.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{name: name, help: help, labels: labels, series: map[string]*counterSeries{}}
}

// Add adds d to the series of values (creating it at 0 first); Add(0, ...)
// makes a series exist before its first event, so a rate() over it is
// defined.
func (c *CounterVec) Add(d float64, values ...string) {
	k := seriesKey(values)
	c.mu.Lock()
	s, ok := c.series[k]
	if !ok {
		s = &counterSeries{values: slices.Clone(values)}
		c.series[k] = s
	}
	s.n += d
	c.mu.Unlock()
}

// Value is the series' count (0 if it does not exist).
func (c *CounterVec) Value(values ...string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.series[seriesKey(values)]; ok {
		return s.n
	}
	return 0
}

// Collect writes the family, its series ordered by label values.
func (c *CounterVec) Collect(w *Writer) {
	c.mu.Lock()
	rows := make([]counterSeries, 0, len(c.series))
	for _, s := range c.series {
		rows = append(rows, *s)
	}
	c.mu.Unlock()
	slices.SortFunc(rows, func(a, b counterSeries) int { return slices.Compare(a.values, b.values) })
	w.Family(c.name, Counter, c.help)
	for _, s := range rows {
		w.Sample("", s.n, pairs(c.labels, s.values)...)
	}
}

// HistogramVec is a histogram family with labels and fixed buckets.
type HistogramVec struct {
	name, help string
	labels     []string
	bounds     []float64 // upper bounds, ascending; +Inf is implied

	mu     sync.Mutex
	series map[string]*histSeries
}

type histSeries struct {
	values []string
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

// NewHistogramVec returns a histogram family with the given bucket upper
// bounds (ascending, without +Inf).
func NewHistogramVec(name, help string, bounds []float64, labels ...string) *HistogramVec {
	return &HistogramVec{name: name, help: help, labels: labels, bounds: slices.Clone(bounds), series: map[string]*histSeries{}}
}

// Observe records v in the series of values.
func (h *HistogramVec) Observe(v float64, values ...string) {
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v: le is inclusive
	k := seriesKey(values)
	h.mu.Lock()
	s, ok := h.series[k]
	if !ok {
		s = &histSeries{values: slices.Clone(values), counts: make([]uint64, len(h.bounds)+1)}
		h.series[k] = s
	}
	s.counts[i]++
	s.sum += v
	s.n++
	h.mu.Unlock()
}

// Collect writes the family: per series its cumulative buckets, sum and
// count, series ordered by label values.
func (h *HistogramVec) Collect(w *Writer) {
	h.mu.Lock()
	rows := make([]histSeries, 0, len(h.series))
	for _, s := range h.series {
		r := *s
		r.counts = slices.Clone(s.counts)
		rows = append(rows, r)
	}
	h.mu.Unlock()
	slices.SortFunc(rows, func(a, b histSeries) int { return slices.Compare(a.values, b.values) })
	w.Family(h.name, Histogram, h.help)
	var le [32]byte
	for _, s := range rows {
		labels := pairs(h.labels, s.values)
		bucket := append(labels, "le", "")
		var cum uint64
		for i, n := range s.counts {
			cum += n
			if i < len(h.bounds) {
				bucket[len(bucket)-1] = string(AppendFloat(le[:0], h.bounds[i]))
			} else {
				bucket[len(bucket)-1] = "+Inf"
			}
			w.Sample("_bucket", float64(cum), bucket...)
		}
		w.Sample("_sum", s.sum, labels...)
		w.Sample("_count", float64(s.n), labels...)
	}
}

// seriesKey joins label values with a byte no valid value holds.
func seriesKey(values []string) string { return strings.Join(values, "\xff") }

// pairs interleaves label names and values for Writer.Sample, ordered by
// label name as the Prometheus client writes them (a histogram's le goes
// after them).
func pairs(names, values []string) []string {
	type pair struct{ n, v string }
	ps := make([]pair, len(names))
	for i, n := range names {
		ps[i].n = n
		if i < len(values) {
			ps[i].v = values[i]
		}
	}
	slices.SortFunc(ps, func(a, b pair) int { return strings.Compare(a.n, b.n) })
	out := make([]string, 0, 2*len(names)+2)
	for _, p := range ps {
		out = append(out, p.n, p.v)
	}
	return out
}
