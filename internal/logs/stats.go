package logs

import (
	"sync"
	"sync/atomic"
)

// Reasons lists the reasons for dropped lines, in the order of procStats.
var Reasons = [...]string{ReasonFull, ReasonBlocked, ReasonClosed, ReasonRefused, ReasonError}

func reasonIndex(why string) int {
	for i, r := range Reasons {
		if r == why {
			return i
		}
	}
	return len(Reasons) - 1
}

// procStats counts one process's dropped lines by reason.
type procStats struct {
	dropped [len(Reasons)]atomic.Uint64
}

// stats are a sink's procStats by process name.
type stats struct {
	mu sync.Mutex // guards by
	by map[string]*procStats
}

func (s *Sink) statsFor(name string) *procStats {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	if s.stats.by == nil {
		s.stats.by = map[string]*procStats{}
	}
	p := s.stats.by[name]
	if p == nil {
		p = new(procStats)
		s.stats.by[name] = p
	}
	return p
}

// DroppedLines calls fn for every process and reason with lines dropped so
// far (podvisor's own messages under "podvisor"), for
// podvisor_log_lines_dropped_total.
func (s *Sink) DroppedLines(fn func(process, reason string, n uint64)) {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	for name, p := range s.stats.by {
		for i := range p.dropped {
			if n := p.dropped[i].Load(); n > 0 {
				fn(name, Reasons[i], n)
			}
		}
	}
}

// srcCount is a run of n lines of one source in a batch.
type srcCount struct {
	src *source
	n   uint64
}

// countN notes n more lines of src in b, for drop accounting: once per
// read on the common path, not once per line.
func (b *batch) countN(src *source, n uint64) {
	if n == 0 {
		return
	}
	if k := len(b.counts); k > 0 && b.counts[k-1].src == src {
		b.counts[k-1].n += n
		return
	}
	b.counts = append(b.counts, srcCount{src, n})
}

// appendCounts appends the runs of from to to, merging at the seam.
func appendCounts(to, from []srcCount) []srcCount {
	if len(from) > 0 && len(to) > 0 && to[len(to)-1].src == from[0].src {
		to[len(to)-1].n += from[0].n
		from = from[1:]
	}
	return append(to, from...)
}

// drop counts b's lines from the from-th (0-based) on as dropped, against
// their processes.
func (s *Sink) drop(b *batch, from uint64, why string) {
	if from >= b.lines {
		return
	}
	s.dropped.Add(b.lines - from)
	i := reasonIndex(why)
	for _, c := range b.counts {
		if from >= c.n {
			from -= c.n
			continue
		}
		c.src.stats.dropped[i].Add(c.n - from)
		from = 0
	}
}
