package main

import (
	"flag"
	"fmt"
	"io"
)

// checkFlags defines check's flags (cmdCheck and the command table share it).
func checkFlags(fs *flag.FlagSet) (path *string) { return configFlag(fs) }

// cmdCheck validates a config: exit 0 with a one-line summary (and a warning
// when the teardown budget is too small), or exit 2 with every error.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", stderr)
	path := checkFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if w := cfg.TeardownWarning(); w != "" {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stdout, "ok: %d processes, %d levels\n", len(cfg.Names), len(cfg.Graph.Levels()))
	return exitOK
}
