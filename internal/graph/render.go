package graph

import (
	"fmt"
	"io"
	"strings"
)

// The renderers take kinds, mapping each name to its process type: "service",
// "oneshot" or "job". A missing or empty kind is shown as "service", the
// procs.yaml default. Each renderer builds its output in memory and writes it
// with a single Write, so a failed write leaves nothing half-reported.

func kindOf(kinds map[string]string, name string) string {
	if k := kinds[name]; k != "" {
		return k
	}
	return "service"
}

// WriteText writes the start levels, one process per line with its type and
// what it waits for, in aligned columns:
//
//	level 0
//	  db        service
//	level 1
//	  migrate   oneshot   after db: ready
func WriteText(w io.Writer, g *Graph, kinds map[string]string) error {
	nameWidth, kindWidth := 0, 0
	for _, name := range g.names {
		nameWidth = max(nameWidth, len(name))
		kindWidth = max(kindWidth, len(kindOf(kinds, name)))
	}
	var b strings.Builder
	for l, names := range g.levels {
		fmt.Fprintf(&b, "level %d\n", l)
		for _, name := range names {
			kind := kindOf(kinds, name)
			deps := g.Dependencies(name)
			if len(deps) == 0 {
				fmt.Fprintf(&b, "  %-*s   %s\n", nameWidth, name, kind)
				continue
			}
			fmt.Fprintf(&b, "  %-*s   %-*s   after ", nameWidth, name, kindWidth, kind)
			for i, e := range deps {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s: %s", e.To, e.Cond)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// dotShapes gives each process type a distinct Graphviz shape.
var dotShapes = map[string]string{"service": "box", "oneshot": "ellipse", "job": "doubleoctagon"}

// WriteDOT writes the graph in Graphviz DOT. Edges point from the dependent
// to its dependency, like "a depends on b" and like cycle paths in errors;
// rankdir=BT then puts dependencies at the top, so the picture reads in start
// order downwards. Each level is one rank. Edges are labelled with their
// condition.
func WriteDOT(w io.Writer, g *Graph, kinds map[string]string) error {
	var b strings.Builder
	b.WriteString("digraph podvisor {\n")
	b.WriteString("\trankdir=BT;\n")
	for l, names := range g.levels {
		fmt.Fprintf(&b, "\tsubgraph level%d {\n\t\trank=same;\n", l)
		for _, name := range names {
			shape, ok := dotShapes[kindOf(kinds, name)]
			if !ok {
				shape = dotShapes["service"]
			}
			fmt.Fprintf(&b, "\t\t%s [shape=%s];\n", dotQuote(name), shape)
		}
		b.WriteString("\t}\n")
	}
	for i, name := range g.names {
		for _, a := range g.depsOf(i) {
			fmt.Fprintf(&b, "\t%s -> %s [label=%s];\n", dotQuote(name), dotQuote(g.names[a.Node]), dotQuote(a.Cond.String()))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotQuote returns s as a DOT double-quoted ID. Backslashes are doubled so
// that the default label (the ID itself) shows s literally.
func dotQuote(s string) string {
	return `"` + dotEscaper.Replace(s) + `"`
}

// Replacers are safe for concurrent use; these are never modified.
var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// mermaidShapes gives each process type a distinct Mermaid node shape, as
// the opening and closing brackets around the label.
var mermaidShapes = map[string][2]string{
	"service": {"[", "]"},
	"oneshot": {"([", "])"},
	"job":     {"{{", "}}"},
}

// WriteMermaid writes the graph as a Mermaid flowchart. Node ids are n0, n1,
// … by position in Names, because names may hold characters that Mermaid
// ids cannot; the name is the label. Edges point from the dependent to its
// dependency with the condition as label, drawn bottom to top as in
// WriteDOT.
func WriteMermaid(w io.Writer, g *Graph, kinds map[string]string) error {
	var b strings.Builder
	b.WriteString("flowchart BT\n")
	for l, names := range g.levels {
		fmt.Fprintf(&b, "    %%%% level %d\n", l)
		for _, name := range names {
			shape, ok := mermaidShapes[kindOf(kinds, name)]
			if !ok {
				shape = mermaidShapes["service"]
			}
			fmt.Fprintf(&b, "    n%d%s\"%s\"%s\n", g.index[name], shape[0], mermaidEscape(name), shape[1])
		}
	}
	for i := range g.names {
		for _, a := range g.depsOf(i) {
			fmt.Fprintf(&b, "    n%d -->|%s| n%d\n", i, a.Cond, a.Node)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidEscape makes s safe inside a quoted Mermaid label, using Mermaid's
// #name; entity codes.
func mermaidEscape(s string) string { return mermaidEscaper.Replace(s) }

var mermaidEscaper = strings.NewReplacer(`#`, "#35;", `"`, "#quot;", `<`, "#lt;", `>`, "#gt;", "\n", " ")
