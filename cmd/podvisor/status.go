package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/server"
)

// defaultStatusAddr is the local end of the default listen address ":9464".
const defaultStatusAddr = "127.0.0.1:9464"

// statusTimeout bounds the whole exchange, so a wedged podvisor cannot hang
// the command.
const statusTimeout = 5 * time.Second

// statusFlags defines status's flags (cmdStatus and the command table share it).
func statusFlags(fs *flag.FlagSet) (addr *string, asJSON *bool, out *output) {
	def := os.Getenv("PODVISOR_ADDR")
	if def == "" {
		def = defaultStatusAddr
	}
	addr = fs.String("addr", def, "podvisor's HTTP `ADDR` ($PODVISOR_ADDR, else 127.0.0.1:9464; \":PORT\" means 127.0.0.1:PORT)")
	asJSON = fs.Bool("json", false, "same as -o json")
	return addr, asJSON, outputFlag(fs)
}

// cmdStatus prints a running podvisor's processes: a table, or the /status
// JSON as served with -o json. Exit 1 when no podvisor answers.
func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", stderr)
	addr, asJSON, out := statusFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor status: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	dial, err := server.DialAddr(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor status: %v\n", err)
		return exitUsage
	}

	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	// No proxy: the target is a podvisor in this pod or on this host, and
	// an HTTP_PROXY meant for the outside world must not intercept it.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	if sock, ok := projectSocket(); ok && !flagSet(fs, "addr") && os.Getenv("PODVISOR_ADDR") == "" {
		// This project's run in the background (run -d): its socket, not
		// a port another project's podvisor may hold.
		client, dial = control.NewClient(sock).HTTPClient(), "localhost"
	}
	st, raw, err := server.FetchStatus(ctx, client, dial)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor status: %v\n", err)
		return exitFail
	}

	if *asJSON || *out == outputJSON { // the Status schema, as served
		if _, err := stdout.Write(raw); err != nil {
			fmt.Fprintf(stderr, "podvisor status: write: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	if err := server.WriteStatusTable(stdout, st, time.Now()); err != nil {
		fmt.Fprintf(stderr, "podvisor status: %v\n", err)
		return exitFail
	}
	return exitOK
}
