//go:build podvisor_notui

package main

import (
	"fmt"
	"io"
)

// cmdUI without the terminal UI: `go build -tags podvisor_notui` leaves
// bubbletea out, for images that want podvisor run's RSS as small as it
// can be (its package initialisers run in every podvisor process;
// docs/BENCHMARKS.md section 15). The web page is unaffected.
func cmdUI(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ui", stderr)
	uiFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fmt.Fprintln(stderr, "podvisor ui: this podvisor was built without the terminal UI (-tags podvisor_notui); use the web page or podvisor status")
	return exitFail
}
