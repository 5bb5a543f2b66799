package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/podvisor/podvisor/internal/app"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/launch"
)

// checkFlags defines check's flags (cmdCheck and the command table share it).
func checkFlags(fs *flag.FlagSet) (path *string, portable *bool, out *output, profiles *profileList) {
	path = configFlag(fs)
	portable = fs.Bool("portable", false, "report what depends on this machine (users, groups, env files, unset variables) as notes, not errors")
	return path, portable, outputFlag(fs), profileFlag(fs)
}

// checkReport is what check found: with -o json, the API's CheckReport
// (schema/openapi.json); as text, the summary on stdout and the rest on
// stderr.
type checkReport struct {
	OK        bool     `json:"ok"`
	Processes int      `json:"processes"`
	Levels    int      `json:"levels"`
	Errors    []string `json:"errors"`   // every error of an invalid config, one per entry
	Warnings  []string `json:"warnings"` // the config runs, but see these
	Notes     []string `json:"notes"`    // with --portable: what depends on this machine
}

// cmdCheck validates a config: exit 0 with a one-line summary (and a warning
// when the teardown budget is too small), or exit 2 with every error.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", stderr)
	path, portable, out, profiles := checkFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	rep := check(*path, *portable, selection(profiles, nil))
	if *out == outputJSON {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "podvisor check: %v\n", err)
			return exitFail
		}
	} else {
		for _, n := range rep.Notes {
			fmt.Fprintln(stderr, "note:", n)
		}
		for _, e := range rep.Errors {
			fmt.Fprintln(stderr, e)
		}
		for _, w := range rep.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		if rep.OK {
			fmt.Fprintf(stdout, "ok: %s, %s\n", count(rep.Processes, "process", "processes"), count(rep.Levels, "level", "levels"))
		}
	}
	if !rep.OK {
		return exitUsage
	}
	return exitOK
}

// check loads and judges the config at path; the counts are of the
// processes sel selects (the whole file is checked).
func check(path string, portable bool, sel config.Selection) checkReport {
	rep := checkReport{Errors: []string{}, Warnings: []string{}, Notes: []string{}}
	var (
		cfg   *config.Config
		notes []*config.Error
		err   error
	)
	if portable {
		cfg, notes, err = config.LoadPortable(path, os.LookupEnv)
	} else {
		cfg, err = loadConfig(path)
	}
	for _, n := range notes {
		rep.Notes = append(rep.Notes, n.Error())
	}
	if err == nil {
		// The token file as run judges it. --portable: one that is not
		// here, or not readable here, is a note (as an env_file is).
		if _, terr := app.UIToken(cfg); terr != nil {
			if portable && (errors.Is(terr, os.ErrNotExist) || errors.Is(terr, os.ErrPermission)) {
				rep.Notes = append(rep.Notes, terr.Error())
			} else {
				err = terr
			}
		}
	}
	if err != nil {
		rep.Errors = strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
		return rep
	}
	rep.Warnings = append(rep.Warnings, cfg.Warnings()...)
	rep.Warnings = append(rep.Warnings, cfg.EndWarnings()...)
	rep.Warnings = append(rep.Warnings, launch.PrivilegeWarnings(cfg)...)
	// A trial bind of the sockets: a warning only, since a running podvisor
	// holds its own (check before a reload).
	sockets := launch.NewSockets()
	if err := sockets.BindAll(cfg); err != nil {
		rep.Warnings = append(rep.Warnings, "the sockets cannot be bound now; podvisor run would fail: "+err.Error())
	}
	sockets.Close()
	for _, name := range cfg.Names {
		if r := cfg.Processes[name].Resources; r != nil {
			rep.Notes = append(rep.Notes, "processes."+name+" asks for "+r.String()+", enforced with a cgroup of its own where podvisor can make one (docs/resources.md)")
		}
	}
	sub, err := selectConfig(cfg, sel)
	if err != nil {
		rep.Errors = []string{err.Error()}
		return rep
	}
	if len(sub.Names) == 0 {
		rep.Warnings = append(rep.Warnings, "every process has profiles: podvisor run starts nothing without --profile")
	}
	rep.OK, rep.Processes, rep.Levels = true, len(sub.Names), len(sub.Graph.Levels())
	return rep
}
