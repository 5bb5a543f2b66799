// Command podvisor is an in-pod process supervisor. See README.md and SPEC.md.
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

const usage = `usage: podvisor <command> [flags]

commands:
  run      supervise the processes of a config   (podvisor run [-c FILE] [--listen ADDR] [--log-format text|json])
  check    validate a config                     (podvisor check [-c FILE])
  graph    show the start order                  (podvisor graph [-c FILE] [--format text|dot|mermaid])
  status   show a running podvisor's processes   (podvisor status [--addr ADDR] [--json])
  wait     block until a target is ready         (podvisor wait --http URL|--tcp HOST:PORT|--file PATH|--exec CMD...|--ready ADDR)
  restart  restart processes of a running podvisor (podvisor restart NAME... [--control PATH] [--timeout 60s])
  stop     stop processes (and their dependents)  (podvisor stop NAME...)
  start    start processes stopped by stop        (podvisor start NAME...)
  signal   send a signal to a process group       (podvisor signal NAME SIGNAL)
  reload   re-read the config, apply what changed (podvisor reload [--dry-run])
  logs     a process's recent output              (podvisor logs NAME [--tail N] [-f])
  version  print the version
`

// realMain dispatches to a subcommand and returns the process exit code.
func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdout, stderr)
	case "check":
		return cmdCheck(rest, stdout, stderr)
	case "graph":
		return cmdGraph(rest, stdout, stderr)
	case "status":
		return cmdStatus(rest, stdout, stderr)
	case "wait":
		return cmdWait(rest, stdout, stderr)
	case "restart", "stop", "start", "signal", "reload":
		return cmdOperate(cmd, rest, stdout, stderr)
	case "logs":
		return cmdLogs(rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "podvisor %s\n", version)
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "podvisor: unknown command %q\n%s", cmd, usage)
	return exitUsage
}
