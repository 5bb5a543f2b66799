package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/podvisor/podvisor/internal/app"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// runOpts are run's flags.
type runOpts struct {
	path, listen, logFormat, control *string
	profiles                         *profileList
	detach                           *bool
}

// runFlags defines run's flags (cmdRun and the command table share it).
func runFlags(fs *flag.FlagSet) runOpts {
	o := runOpts{path: configFlag(fs)}
	o.listen = fs.String("listen", "", "HTTP `ADDR` for /readyz, /livez, /status, /metrics, /events and the web page (\"off\" disables; default from the config)")
	o.logFormat = fs.String("log-format", "", "log `FORMAT`: text or json (default from the config)")
	o.control = fs.String("control", "", "control socket `PATH`, or \"off\" (default: the config's control:, else $PODVISOR_CONTROL, else the default for this user; with -d, one derived from the config's path)")
	o.profiles = profileFlag(fs)
	o.detach = fs.Bool("d", false, "run in the background: return once every process is ready (or the run failed), podvisor down stops it")
	return o
}

// cmdRun supervises the processes of a config: it reads the flags and the
// config, and internal/app composes and runs the rest. Names after the
// flags run those processes and their dependencies only.
func cmdRun(args []string, stdout, stderr io.Writer) int {
	return runPod(args, nil, supervisor.Pace{}, stdout, stderr)
}

// runPod is cmdRun for a pod's processes (kube play): pod names its
// containers, for the pod's phase and conditions in /status; pace is the
// kubelet's pace, or zero.
func runPod(args []string, pod *server.PodRoles, pace supervisor.Pace, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	o := runFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *o.logFormat != "" && *o.logFormat != "text" && *o.logFormat != "json" {
		fmt.Fprintf(stderr, "podvisor run: --log-format must be text or json, not %q\n", *o.logFormat)
		return exitUsage
	}
	sel := selection(o.profiles, fs.Args())
	if *o.detach && !detachedChild() {
		return runDetached(args, o, sel, stdout, stderr)
	}
	early := app.Begin() // while the config is parsed
	cfg, err := loadSelected(*o.path, sel)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	opts := app.Options{
		Config:    cfg,
		Load:      func() (*config.Config, error) { return loadConfig(*o.path) },
		Listen:    *o.listen,
		LogFormat: *o.logFormat,
		Control:   *o.control,
		Pod:       pod,
		Pace:      pace,
		Stdout:    stdout,
		Stderr:    stderr,
	}
	if !sel.IsZero() || len(cfg.Profiles()) > 0 {
		opts.Outside = outsideOf(sel)
	}
	if *o.detach {
		opts.OnReady = tellStarter()
	}
	code, err := app.Run(early, opts)
	if err != nil {
		return exitFail
	}
	return code
}

// loadSelected loads the config at path and refuses a selection with
// unknown names or profiles, and one that starts nothing.
func loadSelected(path string, sel config.Selection) (*config.Config, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	names, err := cfg.Select(sel)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no process to run: every process has profiles (the profiles are %v); use --profile", cfg.File, cfg.Profiles())
	}
	return cfg, nil
}
