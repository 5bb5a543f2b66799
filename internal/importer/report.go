package importer

import (
	"fmt"
	"io"

	"github.com/podvisor/podvisor/internal/config"
)

// WriteReport prints the report grouped by kind: converted as is,
// approximated (how), dropped (why), not converted (why); one entry per
// line, each starting with its file:line.
func (r *Report) WriteReport(w io.Writer) {
	for _, k := range []Kind{AsIs, Approximated, Dropped, Failed} {
		var n int
		for _, e := range r.Entries {
			if e.Kind == k {
				n++
			}
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", k, n)
		for _, e := range r.Entries {
			if e.Kind == k {
				fmt.Fprintf(w, "  %s\n", config.CommentText(e.String()))
			}
		}
	}
}

// Count returns how many entries are of kind k.
func (r *Report) Count(k Kind) int {
	n := 0
	for _, e := range r.Entries {
		if e.Kind == k {
			n++
		}
	}
	return n
}
