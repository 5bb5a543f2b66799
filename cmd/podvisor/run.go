package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/podvisor/podvisor/internal/app"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/server"
)

// runFlags defines run's flags (cmdRun and the command table share it).
func runFlags(fs *flag.FlagSet) (path, listen, logFormat, control *string) {
	path = configFlag(fs)
	listen = fs.String("listen", "", "HTTP `ADDR` for /readyz, /livez, /status, /metrics, /events and the web page (\"off\" disables; default from the config)")
	logFormat = fs.String("log-format", "", "log `FORMAT`: text or json (default from the config)")
	control = fs.String("control", "", "control socket `PATH`, or \"off\" (default: the config's control:, else $PODVISOR_CONTROL, else the default for this user)")
	return path, listen, logFormat, control
}

// cmdRun supervises the processes of a config: it reads the flags and the
// config, and internal/app composes and runs the rest.
func cmdRun(args []string, stdout, stderr io.Writer) int {
	return runPod(args, nil, stdout, stderr)
}

// runPod is cmdRun for a pod's processes (kube play): pod names its
// containers, for the pod's phase and conditions in /status.
func runPod(args []string, pod *server.PodRoles, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	path, listen, logFormat, controlFlag := runFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *logFormat != "" && *logFormat != "text" && *logFormat != "json" {
		fmt.Fprintf(stderr, "podvisor run: --log-format must be text or json, not %q\n", *logFormat)
		return exitUsage
	}
	early := app.Begin() // while the config is parsed
	cfg, err := loadConfig(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	code, err := app.Run(early, app.Options{
		Config:    cfg,
		Load:      func() (*config.Config, error) { return loadConfig(*path) },
		Listen:    *listen,
		LogFormat: *logFormat,
		Control:   *controlFlag,
		Pod:       pod,
		Stdout:    stdout,
		Stderr:    stderr,
	})
	if err != nil {
		return exitFail
	}
	return code
}
