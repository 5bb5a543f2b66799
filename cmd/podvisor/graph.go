package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/podvisor/podvisor/internal/graph"
)

// graphFlags defines graph's flags (cmdGraph and the command table share it).
func graphFlags(fs *flag.FlagSet) (path, format *string) {
	return configFlag(fs), fs.String("format", "text", "output `FORMAT`: text, dot or mermaid")
}

// cmdGraph renders the dependency graph as text, DOT or Mermaid.
func cmdGraph(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("graph", stderr)
	path, format := graphFlags(fs)
	if err := fs.Parse(args); err != nil {
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
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	kinds := make(map[string]string, len(cfg.Processes))
	for name, p := range cfg.Processes {
		kinds[name] = p.Type.String()
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
