package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/podvisor/podvisor/internal/control"
)

// execFlags defines exec's flags (cmdExec and the command table share it).
func execFlags(fs *flag.FlagSet) (path *string) {
	return fs.String("control", defaultControl(), "control socket `PATH` of the podvisor to ask ($PODVISOR_CONTROL, else this project's run -d, else "+control.DefaultPath(os.Geteuid(), os.Getenv)+")")
}

// cmdExec runs a command in a process's context through the running
// podvisor, which spawns it (docs/operate.md#exec): its output comes back
// as it is written, and exec exits with the command's exit code.
func cmdExec(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("exec", stderr)
	path := execFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) < 3 || rest[1] != "--" {
		fmt.Fprintln(stderr, "podvisor exec: want NAME -- CMD [ARG...], such as: podvisor exec web -- env")
		return exitUsage
	}
	// Ctrl-C ends the request; podvisor then kills the command.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := controlClient(*path).Exec(ctx, rest[0], rest[2:], stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor exec: %v\n", err)
	}
	return code
}
