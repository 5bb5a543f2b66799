package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// waitGoneFlags defines wait's --gone and --pid (kept apart from the other
// wait flags so that the command table can add them in one call).
func waitGoneFlags(fs *flag.FlagSet) (gone *bool, pid *int) {
	gone = fs.Bool("gone", false, "the inverse: wait until the target is gone (no answer, no file, process exited); with --http, --tcp, --file or --pid")
	pid = fs.Int("pid", 0, "with --gone: wait until process `PID` has exited")
	return gone, pid
}

// goneTarget is what `podvisor wait --gone` watches.
type goneTarget struct {
	http, tcp, file string
	pid             int
	gone            bool
	other           bool // --ready or --exec given: not supported with --gone
}

// waitGone is `wait --gone`: it exits 0 once the target has gone (an HTTP
// server or a TCP port no longer answers at all, a file no longer exists, a
// process has exited), 1 on timeout, 2 on a usage error. It completes the
// postStart pattern: a sidecar's preStop hook runs it to stay up until the
// app has gone. Any HTTP answer, even a 503, means the server is still
// there: a draining server answers 503 until it closes its listener.
func waitGone(t goneTarget, timeout, interval time.Duration, out output, stdout, stderr io.Writer) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "podvisor wait: "+format+"\n", a...)
		return exitUsage
	}
	if !t.gone {
		return usage("--pid needs --gone (wait --gone --pid PID waits until the process has exited)")
	}
	if t.other {
		return usage("--gone works with --http, --tcp, --file or --pid, not --ready or --exec")
	}
	n := 0
	for _, set := range []bool{t.http != "", t.tcp != "", t.file != "", t.pid != 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return usage("--gone needs exactly one of --http, --tcp, --file or --pid")
	}
	if timeout <= 0 || interval <= 0 {
		return usage("--timeout and --interval must be positive")
	}
	var (
		target string
		check  func(ctx context.Context) (gone bool, detail string)
	)
	switch {
	case t.http != "":
		target = t.http
		if !strings.HasPrefix(t.http, "http://") {
			return usage("--http %q: want an http:// URL", t.http)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		check = func(ctx context.Context) (bool, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.http, nil)
			if err != nil {
				return false, err.Error()
			}
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					return false, "no answer yet within the attempt"
				}
				return true, err.Error()
			}
			resp.Body.Close()
			return false, "still answers: " + resp.Status
		}
	case t.tcp != "":
		target = t.tcp
		if _, _, err := net.SplitHostPort(t.tcp); err != nil {
			return usage("--tcp %q: %v", t.tcp, err)
		}
		check = func(ctx context.Context) (bool, string) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", t.tcp)
			if err != nil {
				if ctx.Err() != nil {
					return false, "connect still pending"
				}
				return true, err.Error()
			}
			c.Close()
			return false, "still accepts connections"
		}
	case t.file != "":
		target = t.file
		check = func(context.Context) (bool, string) {
			_, err := os.Lstat(t.file)
			if errors.Is(err, os.ErrNotExist) {
				return true, "no such file"
			}
			if err != nil {
				return false, err.Error()
			}
			return false, "still exists"
		}
	default:
		if t.pid < 1 {
			return usage("--pid %d: want a process id", t.pid)
		}
		target = "pid " + strconv.Itoa(t.pid)
		check = func(context.Context) (bool, string) { return pidGone(t.pid) }
	}

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	last := ""
	for {
		start := time.Now()
		actx, acancel := context.WithTimeout(ctx, min(interval*10, maxWaitAttempt))
		ok, detail := check(actx)
		acancel()
		if ok {
			return reportWait(out, waitOutcome{OK: true, Target: target, Want: "gone", Detail: detail}, timeout, stdout, stderr)
		}
		last = detail
		tm := time.NewTimer(time.Until(start.Add(interval)))
		select {
		case <-ctx.Done():
			tm.Stop()
			return reportWait(out, waitOutcome{Target: target, Want: "gone", Detail: last, TimedOut: true}, timeout, stdout, stderr)
		case <-tm.C:
		}
	}
}

// pidGone reports whether pid has exited: no such process, or a zombie
// (it has exited and waits for its parent to reap it).
func pidGone(pid int) (bool, string) {
	err := unix.Kill(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true, "no such process"
	}
	b, rerr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if rerr == nil {
		// The state follows the last ')' (the command may hold parentheses).
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return true, "exited (zombie, not yet reaped)"
		}
	}
	if err != nil && !errors.Is(err, unix.EPERM) {
		return false, err.Error()
	}
	return false, "still running"
}
