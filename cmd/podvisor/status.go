package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/podvisor/podvisor/client"
	"github.com/podvisor/podvisor/internal/kube"
	"github.com/podvisor/podvisor/internal/server"
)

// defaultStatusAddr is the local end of the default listen address ":9464".
const defaultStatusAddr = "127.0.0.1:9464"

// statusTimeout bounds the whole exchange, so a wedged podvisor cannot hang
// the command.
const statusTimeout = 5 * time.Second

// statusFlags defines status's flags (cmdStatus and the command table share it).
func statusFlags(fs *flag.FlagSet) (addr, pod *string, asJSON *bool, out *output) {
	def := os.Getenv("PODVISOR_ADDR")
	if def == "" {
		def = defaultStatusAddr
	}
	addr = fs.String("addr", def, "podvisor's HTTP `ADDR` ($PODVISOR_ADDR, else 127.0.0.1:9464; \":PORT\" means 127.0.0.1:PORT)")
	asJSON = fs.Bool("json", false, "same as -o json")
	pod = fs.String("pod", "", "the pod `NAME` kube play runs, over its control socket (podvisor kube ps lists them)")
	return addr, pod, asJSON, outputFlag(fs)
}

// cmdStatus prints a running podvisor's processes: a table, or the /status
// JSON as served with -o json. Exit 1 when no podvisor answers.
func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", stderr)
	addr, pod, asJSON, out := statusFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor status: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	c, err := statusClient(*addr, *pod, flagSet(fs, "addr") || os.Getenv("PODVISOR_ADDR") != "")
	if ue := (usageError{}); errors.As(err, &ue) {
		fmt.Fprintf(stderr, "podvisor status: %v\n", err)
		return exitUsage
	}
	var st server.Status
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
		defer cancel()
		st, err = c.Status(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor status: %v\n", err)
		return exitFail
	}

	if *asJSON || *out == outputJSON { // the Status schema, as served
		if err := writeJSON(stdout, st); err != nil {
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

// usageError marks a status target that is malformed.
type usageError struct{ error }

// statusClient is the client of the pod's control socket, else (no
// address given) of this project's run in the background (run -d: its
// socket, not a port another project's podvisor may hold), else of the
// HTTP address; a malformed address is a usageError.
func statusClient(addr, pod string, addrGiven bool) (*client.Client, error) {
	if pod != "" {
		socket, err := podSocket(pod)
		if err != nil {
			return nil, err
		}
		return controlClient(socket), nil
	}
	if sock, ok := projectSocket(); ok && !addrGiven {
		return controlClient(sock), nil
	}
	if !addrGiven {
		sock, err := onlyPod(addr)
		if err != nil {
			return nil, err
		}
		if sock != "" {
			return controlClient(sock), nil
		}
	}
	c, err := httpClient(addr)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

// onlyPod is the control socket of the one pod kube play runs on this
// machine, when nothing listens on the default address addr (kube play's
// HTTP listener is off by default, so a plain `podvisor status` would
// otherwise find nothing): "" when something listens there or no pod runs;
// an error naming the pods when several run, as the caller must pick one.
func onlyPod(addr string) (string, error) {
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		return "", nil
	}
	pods, err := kube.Pods(podsDir())
	if err != nil {
		return "", nil // no readable pods directory: the HTTP error says more
	}
	var names []string
	for _, p := range pods {
		if p.Socket != "" {
			names = append(names, p.Name)
		}
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		return podSocket(names[0])
	}
	return "", usageError{fmt.Errorf("nothing listens on %s, and %d pods run here (%s): name one with --pod NAME", addr, len(names), strings.Join(names, ", "))}
}
