package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/control"
)

// logsOptions are logs' flags.
type logsOptions struct {
	path               *string
	tail               *int
	follow, reopen     *bool
	since, until, grep *string
	out                *output
}

// logsFlags defines logs' flags (shared with the command table).
func logsFlags(fs *flag.FlagSet) logsOptions {
	var o logsOptions
	o.path, _ = controlFlags(fs)
	o.tail = fs.Int("tail", -1, "print only the last `N` lines (default: all that are kept)")
	o.follow = fs.Bool("f", false, "keep printing new lines until interrupted")
	fs.BoolVar(o.follow, "follow", false, "same as -f")
	o.since = fs.String("since", "", "only lines from `WHEN` on: a duration back from now (10m) or an RFC 3339 time")
	o.until = fs.String("until", "", "only lines before `WHEN`: a duration back from now or an RFC 3339 time")
	o.grep = fs.String("grep", "", "only lines matching the regular expression `RE` (Go syntax)")
	o.reopen = fs.Bool("reopen", false, "reopen the log files (after an external logrotate moved them); takes no name")
	o.out = outputFlag(fs)
	return o
}

// parseWhen reads --since/--until: a duration back from now, or a time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (10m) nor an RFC 3339 time (2026-01-02T15:04:05Z)", s)
}

// cmdLogs prints a process's recent output (from its log file when it
// writes one), or every process's interleaved by time; with -f it follows
// until Ctrl-C. --reopen reopens the log files instead.
func cmdLogs(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("logs", stderr)
	o := logsFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 1 || (*o.reopen && len(pos) > 0) {
		fmt.Fprintf(stderr, "podvisor logs: want at most one process name (none with --reopen), got %d (%s)\n", len(pos), strings.Join(pos, " "))
		return exitUsage
	}
	q := control.LogsQuery{Tail: *o.tail, Follow: *o.follow, Grep: *o.grep}
	if len(pos) == 1 {
		q.Name = pos[0]
	}
	now := time.Now()
	for _, w := range []struct {
		flag, val string
		to        *time.Time
	}{{"--since", *o.since, &q.Since}, {"--until", *o.until, &q.Until}} {
		if *w.to, err = parseWhen(w.val, now); err != nil {
			fmt.Fprintf(stderr, "podvisor logs: %s: %v\n", w.flag, err)
			return exitUsage
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !q.Follow || *o.reopen {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, control.DefaultTimeout)
		defer cancel()
	}
	c := controlClient(*o.path)
	if *o.reopen {
		res, err := c.ReopenLogs(ctx)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "podvisor logs: %v\n", err)
			return exitFail
		case *o.out == outputJSON:
			return printResponseJSON("logs", res, stdout, stderr)
		case !res.OK:
			fmt.Fprintf(stderr, "podvisor logs: %s\n", res.Error)
			return exitFail
		}
		for _, r := range res.Results {
			fmt.Fprintln(stdout, r.Message)
		}
		return exitOK
	}
	if *o.out == outputJSON { // JSON lines: a LogLine each (schema/openapi.json)
		err = c.LogLines(ctx, q, func(l api.LogLine) error { return writeJSON(stdout, l) })
	} else {
		err = c.Logs(ctx, stdout, q)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor logs: %v\n", err)
		return exitFail
	}
	return exitOK
}
