// Command podvisor is an in-pod process supervisor. See README.md and
// docs/reference.md; `podvisor help` lists the commands.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain dispatches to a subcommand (commands.go) and returns the process
// exit code.
func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeOverview(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help":
		writeOverview(stdout)
		return exitOK
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	case manCommand:
		writeMan(stdout, commands)
		return exitOK
	}
	if len(args[0]) > 1 && args[0][0] == '-' {
		fmt.Fprintf(stderr, "podvisor: %s: a command comes first, flags after it\nRun 'podvisor help' for the list of commands.\n", args[0])
		return exitUsage
	}
	return dispatch(args, stdout, stderr)
}
