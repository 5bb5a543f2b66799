package webui

import (
	"errors"
	"fmt"
	"slices"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/logs"
)

// tailLines returns the last n lines of name's output; with name "", of
// every process's, interleaved by time and prefixed with its name, the way
// `podvisor logs` without a name prints them (docs/ui.md).
func tailLines(b control.Backend, name string, n int) ([]string, error) {
	if name != "" {
		tail, err := b.Tail(name)
		if err != nil {
			return nil, err
		}
		lines, _ := tail.Last(n)
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = l.Line
		}
		return out, nil
	}
	lb, ok := b.(control.LogBackend)
	if !ok {
		return nil, errors.New("output needs a process name here")
	}
	type named struct {
		name string
		logs.TailLine
	}
	var all []*named // pointers: a sort of a pointer shape adds no code to the binary
	width := 0
	for _, p := range lb.LogNames() {
		tail, err := b.Tail(p)
		if err != nil {
			continue // log.tail: 0, or gone since LogNames
		}
		width = max(width, len(p))
		lines, _ := tail.Last(n)
		for _, l := range lines {
			all = append(all, &named{p, l})
		}
	}
	slices.SortStableFunc(all, func(a, b *named) int { return a.Time.Compare(b.Time) })
	all = all[max(len(all)-n, 0):]
	out := make([]string, len(all))
	for i, l := range all {
		out[i] = fmt.Sprintf("%-*s | %s", width, l.name, l.Line)
	}
	return out, nil
}
