package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"golang.org/x/sys/unix"
)

// defaultConfigPath is run's default -c: $PODVISOR_CONFIG, else procs.yaml.
func defaultConfigPath() string {
	if p := os.Getenv("PODVISOR_CONFIG"); p != "" {
		return p
	}
	return "procs.yaml"
}

// defaultControl is the socket the client commands talk to when --control
// does not say: $PODVISOR_CONTROL, else this project's run in the
// background (its config as run's -c defaults to it), else the default.
func defaultControl() string {
	if p := os.Getenv("PODVISOR_CONTROL"); p != "" {
		return p
	}
	return control.Find(os.Geteuid(), os.Getenv, defaultConfigPath())
}

// projectSocket returns the socket of this project's run in the
// background, if one is there.
func projectSocket() (string, bool) {
	p := control.Find(os.Geteuid(), os.Getenv, defaultConfigPath())
	return p, p != control.DefaultPath(os.Geteuid(), os.Getenv)
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// downFlags defines down's flags (cmdDown and the command table share it).
func downFlags(fs *flag.FlagSet) (path *string, timeout *time.Duration) {
	path = fs.String("control", defaultControl(), "control socket `PATH` of the podvisor to stop ($PODVISOR_CONTROL, else this project's run -d, else "+control.DefaultPath(os.Geteuid(), os.Getenv)+")")
	timeout = fs.Duration("timeout", 0, "how long to wait for the end (default: as long as it takes; the podvisor bounds its teardown by shutdown_timeout)")
	return path, timeout
}

// cmdDown stops a running podvisor as SIGTERM would, waits for its end,
// prints the shutdown report and exits with the run's exit code.
func cmdDown(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("down", stderr)
	path, timeout := downFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor down: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	c := controlClient(*path)
	id, err := c.Identity(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor down: %v\n", err)
		return exitFail
	}
	res, err := c.Down(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor down: %v\n", err)
		return exitFail
	}
	printDownReport(stdout, id, res)
	waitExited(ctx, id.Pid)
	return res.ExitCode
}

// printDownReport prints who stopped, why, and how each process ended.
func printDownReport(w io.Writer, id control.Identity, res control.DownResponse) {
	fmt.Fprintf(w, "podvisor (pid %d, config %s) stopped: %s; exit code %d\n", id.Pid, id.Config, res.Cause, res.ExitCode)
	sd := res.Shutdown
	if sd == nil {
		return
	}
	fmt.Fprintf(w, "shutdown took %.3fs of shutdown_timeout %.3fs\n", sd.UsedSeconds, sd.BudgetSeconds)
	for _, p := range sd.Processes {
		line := fmt.Sprintf("  %s: %s", p.Process, p.EndedBy)
		if p.Signal != "" {
			line += " " + p.Signal
		}
		if p.StopSeconds != nil {
			line += fmt.Sprintf(" after %.3fs", *p.StopSeconds)
		}
		if p.ExitCode != nil {
			line += fmt.Sprintf(", code %d", *p.ExitCode)
		}
		fmt.Fprintln(w, line)
	}
}

// waitExited waits until the process pid has exited (it answered just before
// closing its socket and exiting), so that a run -d right after down finds
// the place free. A pid it cannot watch is not waited for.
func waitExited(ctx context.Context, pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for ctx.Err() == nil {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
		if n > 0 || err != nil && err != unix.EINTR {
			return
		}
	}
}
