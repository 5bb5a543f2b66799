package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/control"
)

// clientSlack is how much longer the client waits than the server's own
// --timeout, so that the server's "still in progress" answer arrives.
const clientSlack = 5 * time.Second

// controlFlags registers --control, --timeout and --pod.
func controlFlags(fs *flag.FlagSet) (path *string, timeout *time.Duration) {
	path = fs.String("control", defaultControl(), "control socket `PATH` of the podvisor to act on ($PODVISOR_CONTROL, else this project's run -d, else "+control.DefaultPath(os.Geteuid(), os.Getenv)+")")
	timeout = fs.Duration("timeout", control.DefaultTimeout, "how long to wait for the outcome")
	fs.Var(podFlag{path}, "pod", "act on the pod `NAME` kube play runs: its control socket (podvisor kube ps lists them)")
	return path, timeout
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments (`podvisor logs web -f`), which flag.Parse alone
// does not allow. "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// cmdOperate runs restart, stop, start, signal and reload.
// operateFlags defines the flags of restart, stop, start, signal and reload
// (shared with the command table).
func operateFlags(op string, fs *flag.FlagSet) (path *string, timeout *time.Duration, dryRun *bool, out *output) {
	path, timeout = controlFlags(fs)
	dryRun = new(bool)
	if op == "reload" {
		fs.BoolVar(dryRun, "dry-run", false, "print what a reload would do, and do nothing")
	}
	return path, timeout, dryRun, outputFlag(fs)
}

// operate returns the run function of one operate verb.
func operate(op string) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int { return cmdOperate(op, args, stdout, stderr) }
}

func cmdOperate(op string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(op, stderr)
	path, timeout, dryRunFlag, out := operateFlags(op, fs)
	pos, err := parseInterleaved(fs, args)
	dryRun := *dryRunFlag
	if err != nil {
		return exitUsage
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "podvisor %s: %s\n", op, msg)
		return exitUsage
	}
	req := control.Request{DryRun: dryRun}
	switch op {
	case "reload":
		if len(pos) > 0 && dryRun {
			return usage("--dry-run plans a config reload: it takes no process names")
		}
		req.Names = pos // with names: each process's own reload: action
	case "signal":
		if len(pos) != 2 {
			return usage("want NAME SIGNAL, such as: podvisor signal web HUP")
		}
		if _, err := control.ParseSignal(pos[1]); err != nil {
			return usage(err.Error())
		}
		req.Names, req.Signal = pos[:1], pos[1]
	default:
		if len(pos) == 0 {
			return usage("want at least one process name")
		}
		req.Names = pos
	}
	if *timeout <= 0 {
		return usage("--timeout must be positive")
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout+clientSlack)
	defer cancel()
	res, err := controlClient(*path).CommandWait(ctx, op, req, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor %s: %v\n", op, err)
		return exitFail
	}
	if *out == outputJSON {
		return printResponseJSON(op, res, stdout, stderr)
	}
	for _, line := range res.Plan {
		fmt.Fprintln(stdout, line)
	}
	for _, r := range res.Results {
		w := stdout
		if !r.OK {
			w = stderr
		}
		fmt.Fprintf(w, "%s: %s\n", r.Name, r.Message)
	}
	if res.Error != "" {
		// Name who refused: with several podvisors on one machine, the
		// answer may come from another one than the user meant.
		by := ""
		if res.By.Pid > 0 {
			by = fmt.Sprintf(" (answered by podvisor pid %d, config %s)", res.By.Pid, res.By.Config)
		}
		fmt.Fprintf(stderr, "podvisor %s: %s%s\n", op, res.Error, by)
	}
	for _, e := range res.Errors {
		fmt.Fprintln(stderr, e)
	}
	if op == "reload" && res.OK && !dryRun && len(req.Names) == 0 {
		fmt.Fprintf(stdout, "config generation %d\n", res.Generation)
	}
	if !res.OK {
		return exitFail
	}
	return exitOK
}

// printResponseJSON prints the answer as the API's CommandResponse; the
// exit code is the text output's.
func printResponseJSON(op string, res control.Response, stdout, stderr io.Writer) int {
	if err := writeJSON(stdout, res); err != nil {
		fmt.Fprintf(stderr, "podvisor %s: %v\n", op, err)
		return exitFail
	}
	if !res.OK {
		return exitFail
	}
	return exitOK
}
