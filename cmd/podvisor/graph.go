package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/podvisor/podvisor/internal/graph"
)

// graphFlags defines graph's flags (cmdGraph and the command table share it).
func graphFlags(fs *flag.FlagSet) (path, format *string, out *output, profiles *profileList) {
	return configFlag(fs), fs.String("format", "text", "output `FORMAT`: text, dot or mermaid"), outputFlag(fs), profileFlag(fs)
}

// graphDoc is graph -o json: the API's Graph (schema/openapi.json).
type graphDoc struct {
	Processes []graphProcess `json:"processes"`
	Levels    [][]string     `json:"levels"` // the names by start level
	Edges     []graphEdge    `json:"edges"`
}

type graphProcess struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Level int    `json:"level"`
}

type graphEdge struct {
	From      string `json:"from"` // the dependent
	To        string `json:"to"`   // its dependency
	Condition string `json:"condition"`
}

func newGraphDoc(g *graph.Graph, kinds map[string]string) graphDoc {
	d := graphDoc{Processes: []graphProcess{}, Levels: g.Levels(), Edges: []graphEdge{}}
	if d.Levels == nil {
		d.Levels = [][]string{}
	}
	for _, n := range g.Names() {
		d.Processes = append(d.Processes, graphProcess{Name: n, Type: kinds[n], Level: g.Level(n)})
		for _, e := range g.Dependencies(n) {
			d.Edges = append(d.Edges, graphEdge{From: e.From, To: e.To, Condition: e.Cond.String()})
		}
	}
	return d
}

// cmdGraph renders the dependency graph as text, DOT or Mermaid.
func cmdGraph(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("graph", stderr)
	path, format, out, profiles := graphFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *out == outputJSON && *format != "text" {
		fmt.Fprintln(stderr, "podvisor graph: -o json and --format exclude each other")
		return exitUsage
	}
	write, ok := map[string]func(io.Writer, *graph.Graph, map[string]string) error{
		"text": graph.WriteText, "dot": graph.WriteDOT, "mermaid": graph.WriteMermaid,
	}[*format]
	if !ok {
		fmt.Fprintf(stderr, "podvisor graph: unknown format %q (want text, dot or mermaid)\n", *format)
		return exitUsage
	}
	cfg, err := loadConfig(*path)
	if err == nil {
		cfg, err = selectConfig(cfg, selection(profiles, nil))
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	kinds := make(map[string]string, len(cfg.Processes))
	for name, p := range cfg.Processes {
		kinds[name] = p.Type.String()
	}
	if *out == outputJSON {
		write = func(w io.Writer, g *graph.Graph, kinds map[string]string) error {
			return writeJSON(w, newGraphDoc(g, kinds))
		}
	}
	w := bufio.NewWriter(stdout)
	if err := write(w, cfg.Graph, kinds); err != nil {
		fmt.Fprintf(stderr, "podvisor graph: %v\n", err)
		return exitFail
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "podvisor graph: %v\n", err)
		return exitFail
	}
	return exitOK
}
