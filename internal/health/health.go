package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// Result is the outcome of one probe attempt. A failing probe is a Result with
// OK false and a short Detail, never a Go error: the caller counts failures
// against a threshold, it does not handle them.
type Result struct {
	OK     bool
	Detail string
	// Inconclusive: podvisor itself could not make the attempt (out of file
	// descriptors, memory or processes). It says nothing about the process,
	// so it never counts as a failure: Watch retries with backoff.
	Inconclusive bool
}

// Checker runs one probe attempt. The ctx carries the attempt's timeout; Check
// must return promptly once ctx is done.
type Checker interface {
	Check(ctx context.Context) Result
}

// CommandRunner runs argv in its own process group and kills the group when
// ctx is done (internal/proc's Reaper implements it). health never forks
// itself, so the single reaper stays the only place that waits for children.
// err is non-nil only when the command could not be spawned or ctx expired.
type CommandRunner interface {
	RunCommand(ctx context.Context, argv, env []string, dir string, maxOutput int) (code int, output []byte, err error)
}

// NewChecker builds the polled checker for p: http, tcp, grpc, exec or file. env and
// dir are the process's environment and working directory (used by exec);
// since is the process's latest start (used by file, so that a file left over
// from an earlier run never counts). log and notify probes are event sources,
// not checkers: see LogMatcher, NotifySocket and WaitNotifyFD.
func NewChecker(p *config.Probe, runner CommandRunner, env []string, dir string, since time.Time) (Checker, error) {
	if p == nil {
		return nil, errors.New("no probe")
	}
	switch p.Kind {
	case config.ProbeHTTP:
		if p.H2C {
			return NewH2CChecker(p.Target)
		}
		return NewHTTPChecker(p.Target, nil)
	case config.ProbeTCP:
		return NewTCPChecker(p.Target)
	case config.ProbeGRPC:
		return NewGRPCChecker(p.Target, p.Service, p.TLS)
	case config.ProbeExec:
		return NewExecChecker(runner, p.Command, env, dir)
	case config.ProbeFile:
		return NewFileChecker(p.Target, since)
	}
	return nil, fmt.Errorf("probe kind %s is an event source, not a polled check", p.Kind)
}

// failure is a failed Result with a formatted Detail.
func failure(format string, args ...any) Result {
	return Result{Detail: fmt.Sprintf(format, args...)}
}

// cutShort reports whether an attempt that failed with err was cut short by
// ctx (its deadline, or the caller giving up) and, if so, the Result saying
// so: "timeout after 1s" or "canceled". A network timeout counts even when
// ctx has not noticed its deadline yet: the dialer enforces the same
// deadline itself and can report first. start is when the attempt began; the
// budget shown is the time from start to the deadline, rounded to the
// millisecond (the caller sets the deadline just before calling Check).
func cutShort(ctx context.Context, start time.Time, err error) (Result, bool) {
	var nerr net.Error
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &nerr) && nerr.Timeout()
	switch {
	case timedOut:
		dl, ok := ctx.Deadline()
		switch budget := dl.Sub(start); {
		case !ok:
			return failure("timeout"), true
		case budget <= 0:
			// A starved caller can begin an attempt after its deadline;
			// "timeout after -3ms" would read as a clock bug.
			return failure("timeout: the deadline had passed before the attempt started"), true
		default:
			return failure("timeout after %s", budget.Round(time.Millisecond)), true
		}
	case ctx.Err() != nil:
		return failure("canceled"), true
	}
	return Result{}, false
}

// clip shortens s to at most n bytes, marking the cut, so that a Detail stays
// one short log line whatever a probed peer sends.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
