package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/podvisor/podvisor/internal/app"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/launch"
)

// checkFlags defines check's flags (cmdCheck and the command table share it).
func checkFlags(fs *flag.FlagSet) (path *string, portable *bool) {
	path = configFlag(fs)
	portable = fs.Bool("portable", false, "report what depends on this machine (users, groups, env files, unset variables) as notes, not errors")
	return path, portable
}

// cmdCheck validates a config: exit 0 with a one-line summary (and a warning
// when the teardown budget is too small), or exit 2 with every error.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", stderr)
	path, portable := checkFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	var (
		cfg   *config.Config
		notes []*config.Error
		err   error
	)
	if *portable {
		cfg, notes, err = config.LoadPortable(*path, os.LookupEnv)
	} else {
		cfg, err = loadConfig(*path)
	}
	var tokenNote error
	if err == nil {
		// The token file as run judges it. --portable: one that is not
		// here, or not readable here, is a note (as an env_file is).
		if _, terr := app.UIToken(cfg); terr != nil {
			if *portable && (errors.Is(terr, os.ErrNotExist) || errors.Is(terr, os.ErrPermission)) {
				tokenNote = terr
			} else {
				err = terr
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(stderr, config.FormatNotes(notes))
	}
	if tokenNote != nil {
		fmt.Fprintln(stderr, "note:", tokenNote)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	for _, w := range append(cfg.Warnings(), cfg.EndWarnings()...) {
		fmt.Fprintln(stderr, "warning:", w)
	}
	// A trial bind of the sockets: a warning only, since a running podvisor
	// holds its own (check before a reload).
	sockets := launch.NewSockets()
	if err := sockets.BindAll(cfg); err != nil {
		fmt.Fprintf(stderr, "%v\nwarning: the sockets above cannot be bound now; podvisor run would fail\n", err)
	}
	sockets.Close()
	fmt.Fprintf(stdout, "ok: %s, %s\n", count(len(cfg.Names), "process", "processes"), count(len(cfg.Graph.Levels()), "level", "levels"))
	return exitOK
}
