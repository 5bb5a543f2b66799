package main

import (
	"fmt"
	"io"

	"github.com/podvisor/podvisor/schema"
)

// cmdSchema prints the JSON Schema of procs.yaml.
func cmdSchema(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("schema", stderr)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor schema: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if _, err := stdout.Write(schema.JSON); err != nil {
		fmt.Fprintf(stderr, "podvisor schema: write: %v\n", err)
		return exitFail
	}
	return exitOK
}
