package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/proc"
)

// maxWaitAttempt bounds one attempt of `podvisor wait`, so that a target that
// hangs (a server that accepts but never answers while it starts) is retried
// rather than allowed to use up the whole --timeout.
const maxWaitAttempt = 10 * time.Second

// waitValueFlags are the wait flags that take a value; splitExec must skip
// their values so that `--file --exec` waits for a file named "--exec".
var waitValueFlags = map[string]bool{"http": true, "tcp": true, "file": true, "ready": true, "timeout": true, "interval": true, "pid": true, "o": true}

// waitOptions are wait's flags; --exec is found by splitExec, so its value
// is not kept.
type waitOptions struct {
	httpURL, tcpAddr, file, readyAddr *string
	timeout, interval                 *time.Duration
	once                              *bool
	out                               *output
}

// waitFlags defines wait's flags (cmdWait and the command table share it).
func waitFlags(fs *flag.FlagSet) *waitOptions {
	o := &waitOptions{
		httpURL:   fs.String("http", "", "wait until a GET of `URL` answers 200-399"),
		tcpAddr:   fs.String("tcp", "", "wait until `HOST:PORT` accepts a TCP connection"),
		file:      fs.String("file", "", "wait until `PATH` exists"),
		readyAddr: fs.String("ready", "", "wait until the podvisor at `ADDR` (host:port or URL) is ready (/readyz answers 200)"),
	}
	fs.Bool("exec", false, "wait until the command made of all remaining arguments exits 0 (must come last)")
	o.timeout = fs.Duration("timeout", 60*time.Second, "give up after this long")
	o.interval = fs.Duration("interval", 100*time.Millisecond, "time between attempts")
	o.once = fs.Bool("once", false, "make one attempt (within --timeout) and exit 0 if it succeeded, else 1 (kube play's httpGet preStop hooks)")
	o.out = outputFlag(fs)
	return o
}

// cmdWait blocks until one target is ready, for postStart hooks and scripts:
//
//	podvisor wait (--http URL | --tcp HOST:PORT | --file PATH | --exec CMD... | --ready ADDR)
//	              [--timeout 60s] [--interval 100ms]
//
// It exits 0 when the target is ready, 1 on timeout (saying what the last
// attempt saw), 2 on a usage error. --exec must come last: every argument
// after it is the command (a single argument is run by /bin/sh -c, as a
// string `exec` probe is). --ready ADDR waits for a running podvisor's
// /readyz to answer 200; ADDR is host:port (":9464" means localhost) or a
// URL (its path defaults to /readyz). --http accepts 200-399 and --file any
// existing file; the checks are the same as the `ready` probes of procs.yaml.
func cmdWait(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("wait", stderr)
	o := waitFlags(fs)
	httpURL, tcpAddr, file, readyAddr, timeout, interval := o.httpURL, o.tcpAddr, o.file, o.readyAddr, o.timeout, o.interval
	gone, pid := waitGoneFlags(fs)

	flagArgs, argv, hasExec := splitExec(args)
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "podvisor wait: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	if *gone || *pid != 0 {
		return waitGone(goneTarget{http: *httpURL, tcp: *tcpAddr, file: *file, pid: *pid, gone: *gone,
			other: *readyAddr != "" || hasExec}, *timeout, *interval, *o.out, stdout, stderr)
	}
	n := 0
	for _, set := range []bool{*httpURL != "", *tcpAddr != "", *file != "", *readyAddr != "", hasExec} {
		if set {
			n++
		}
	}
	if n != 1 {
		return usage("exactly one of --http, --tcp, --file, --exec or --ready is required")
	}
	if *timeout <= 0 || *interval <= 0 {
		return usage("--timeout and --interval must be positive")
	}

	var (
		checker health.Checker
		target  string
		err     error
	)
	switch {
	case *httpURL != "":
		target = *httpURL
		checker, err = health.NewHTTPChecker(target, nil)
	case *tcpAddr != "":
		target = *tcpAddr
		checker, err = health.NewTCPChecker(target)
	case *file != "":
		// Any existing file counts: there is no process start to compare with.
		target = *file
		checker, err = health.NewFileChecker(target, time.Time{})
	case *readyAddr != "":
		target, err = readyzURL(*readyAddr)
		if err == nil {
			checker, err = health.NewHTTPChecker(target, func(code int) bool { return code == 200 })
		}
	case hasExec:
		if len(argv) == 0 {
			return usage("--exec needs a command")
		}
		if len(argv) == 1 {
			argv = []string{"/bin/sh", "-c", argv[0]}
		}
		target = strings.Join(argv, " ")
		r, stop := startReaper()
		defer stop()
		checker, err = health.NewExecChecker(r, argv, nil, "")
	}
	if err != nil {
		return usage("%v", err)
	}
	attempts := 0
	if *o.once {
		attempts = 1
	}
	last, ok := waitReady(checker, *timeout, *interval, attempts)
	return reportWait(*o.out, waitOutcome{OK: ok, Target: target, Want: "ready", Detail: last.Detail, TimedOut: !ok && !*o.once}, *timeout, stdout, stderr)
}

// waitOutcome is what wait found; -o json prints it (schema/openapi.json's
// WaitOutcome).
type waitOutcome struct {
	OK       bool   `json:"ok"`        // the target became what was waited for
	Target   string `json:"target"`    // the URL, address, file, command or pid
	Want     string `json:"want"`      // "ready", or "gone" with --gone
	Detail   string `json:"detail"`    // what the last attempt saw
	TimedOut bool   `json:"timed_out"` // --timeout passed (not with --once)
}

// reportWait prints the outcome, as text or JSON, and returns the exit
// code: 0 when OK, else 1.
func reportWait(out output, w waitOutcome, timeout time.Duration, stdout, stderr io.Writer) int {
	code := exitFail
	if w.OK {
		code = exitOK
	}
	if out == outputJSON {
		if err := writeJSON(stdout, w); err != nil {
			fmt.Fprintf(stderr, "podvisor wait: %v\n", err)
			return exitFail
		}
		return code
	}
	switch {
	case w.OK:
		fmt.Fprintf(stdout, "%s: %s (%s)\n", w.Target, w.Want, w.Detail)
	case w.TimedOut:
		fmt.Fprintf(stderr, "podvisor wait: timeout after %s: %s: %s\n", timeout, w.Target, w.Detail)
	default:
		fmt.Fprintf(stderr, "podvisor wait: %s: %s\n", w.Target, w.Detail)
	}
	return code
}

// splitExec splits args at a --exec flag: the arguments before it are flags,
// the ones after it (less a leading "--") the command.
func splitExec(args []string) (flags, argv []string, found bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name := strings.TrimLeft(a, "-")
		if name == a || strings.HasPrefix(a, "---") {
			continue // not a flag: fs.Parse reports it
		}
		if name == "exec" {
			argv = args[i+1:]
			if len(argv) > 0 && argv[0] == "--" {
				argv = argv[1:]
			}
			return args[:i], argv, true
		}
		if waitValueFlags[name] {
			i++ // skip the value
		}
	}
	return args, nil, false
}

// readyzURL turns --ready's ADDR into the URL of podvisor's /readyz.
func readyzURL(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		if strings.HasPrefix(addr, ":") {
			addr = "localhost" + addr // podvisor's default listen address is ":9464"
		}
		return "http://" + addr + "/readyz", nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("--ready: %w", err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/readyz"
	}
	return u.String(), nil
}

// waitReady runs c every interval until it succeeds or timeout passes, and
// returns the last result. An attempt cut short by the overall deadline does
// not replace an earlier complete one, which says more about the target.
// With attempts > 0 it gives up after that many.
func waitReady(c health.Checker, timeout, interval time.Duration, attempts int) (health.Result, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	// By the clock, not only ctx.Err(): a probe's own network deadline can
	// fire before the context's timer does, and an attempt begun in that gap
	// would report "the deadline had passed" over the real cause.
	past := func() bool { return ctx.Err() != nil || !time.Now().Before(deadline) }
	var last health.Result
	for {
		start := time.Now()
		actx, acancel := context.WithTimeout(ctx, maxWaitAttempt)
		r := c.Check(actx)
		acancel()
		if r.OK {
			return r, true
		}
		if !past() || last.Detail == "" {
			last = r
		}
		if attempts--; past() || attempts == 0 {
			return last, false
		}
		t := time.NewTimer(time.Until(start.Add(interval)))
		select {
		case <-ctx.Done():
			t.Stop()
			return last, false
		case <-t.C:
		}
	}
}

// startReaper runs a proc.Reaper for --exec attempts; stop ends it and waits
// until it has returned. wait is a short-lived program of its own, so this
// is the process's only reaper, as proc requires.
func startReaper() (r *proc.Reaper, stop func()) {
	r = proc.NewReaper(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	return r, func() { cancel(); <-done }
}
