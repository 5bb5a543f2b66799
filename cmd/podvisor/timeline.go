package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/podvisor/podvisor/internal/timeline"
)

// cmdTimeline prints a running podvisor's start-up and shutdown timeline as
// a text Gantt chart with the critical chain, or writes it as an SVG with
// --svg, or prints the /timeline JSON with -o json. Exit 1 when no podvisor
// answers or the file cannot be written.
// timelineFlags defines timeline's flags (shared with help and completion).
func timelineFlags(fs *flag.FlagSet) (addr, svg *string, asJSON *bool, width *int, out *output) {
	def := os.Getenv("PODVISOR_ADDR")
	if def == "" {
		def = defaultStatusAddr
	}
	addr = fs.String("addr", def, "podvisor's HTTP `ADDR` ($PODVISOR_ADDR, else 127.0.0.1:9464; \":PORT\" means 127.0.0.1:PORT)")
	svg = fs.String("svg", "", "write the chart as SVG to this `FILE` (\"-\": standard output) instead of printing text")
	asJSON = fs.Bool("json", false, "same as -o json")
	width = fs.Int("width", 60, "`N` columns for the text chart's bars")
	return addr, svg, asJSON, width, outputFlag(fs)
}

func cmdTimeline(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("timeline", stderr)
	addr, svg, asJSON, width, out := timelineFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor timeline: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	*asJSON = *asJSON || *out == outputJSON
	if *asJSON && *svg != "" {
		fmt.Fprintln(stderr, "podvisor timeline: -o json and --svg exclude each other")
		return exitUsage
	}
	c, err := httpClient(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor timeline: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	doc, err := c.Timeline(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor timeline: %v\n", err)
		return exitFail
	}
	switch {
	case *asJSON:
		err = writeJSON(stdout, doc)
	case *svg == "-":
		err = timeline.WriteSVG(stdout, doc)
	case *svg != "":
		err = writeSVGFile(*svg, doc)
	default:
		err = timeline.WriteText(stdout, doc, *width)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor timeline: %v\n", err)
		return exitFail
	}
	return exitOK
}

// writeSVGFile writes the chart to a temporary file beside path and renames
// it, so a reader never sees half a chart.
func writeSVGFile(path string, doc timeline.Doc) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".timeline-*.svg")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := timeline.WriteSVG(f, doc); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
