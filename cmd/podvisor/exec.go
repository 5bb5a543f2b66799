package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"syscall"

	"github.com/podvisor/podvisor/api"
	"github.com/podvisor/podvisor/internal/control"
)

type execOptions struct {
	path       *string
	stdin, tty *bool
}

// execFlags defines exec's flags (cmdExec and the command table share it).
func execFlags(fs *flag.FlagSet) execOptions {
	o := execOptions{stdin: new(bool), tty: new(bool)}
	o.path = fs.String("control", defaultControl(), "control socket `PATH` of the podvisor to ask ($PODVISOR_CONTROL, else this project's run -d, else "+control.DefaultPath(os.Geteuid(), os.Getenv)+")")
	fs.BoolVar(o.stdin, "i", false, "forward stdin to the command (-it: with a terminal)")
	fs.BoolVar(o.stdin, "stdin", false, "same as -i")
	fs.BoolVar(o.tty, "t", false, "give the command a pseudo-terminal (-it: this terminal in raw mode, its size forwarded)")
	fs.BoolVar(o.tty, "tty", false, "same as -t")
	return o
}

// shortFlags matches combined one-letter flags: -it, -ti.
var shortFlags = regexp.MustCompile(`^-[it]{2,}$`)

// splitShort turns -it into -i -t before "--", as docker and kubectl
// take them (a process name never begins with "-").
func splitShort(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if shortFlags.MatchString(a) {
			for _, c := range a[1:] {
				out = append(out, "-"+string(c))
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// cmdExec runs a command in a process's context through the running
// podvisor, which spawns it (docs/operate.md#exec): its output comes back
// as it is written, and exec exits with the command's exit code. With -i
// or -t it goes through the framed stream (exec_tty.go).
func cmdExec(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("exec", stderr)
	o := execFlags(fs)
	if err := fs.Parse(splitShort(args)); err != nil {
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) < 3 || rest[1] != "--" {
		fmt.Fprintln(stderr, "podvisor exec: want NAME -- CMD [ARG...], such as: podvisor exec web -- env, or podvisor exec -it web -- sh")
		return exitUsage
	}
	if *o.stdin || *o.tty {
		req := api.ExecRequest{Name: rest[0], Command: rest[2:], Stdin: *o.stdin, TTY: *o.tty}
		return execStream(*o.path, req, os.Stdin, stdout, stderr)
	}
	// Ctrl-C ends the request; podvisor then kills the command.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := controlClient(*o.path).Exec(ctx, rest[0], rest[2:], stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor exec: %v\n", err)
	}
	return code
}

// execFlagArgs is the part of exec's arguments that holds flags (-it
// split): what comes before "--".
func execFlagArgs(args []string) []string {
	args = splitShort(args)
	for i, a := range args {
		if a == "--" {
			return args[:i]
		}
	}
	return args
}
