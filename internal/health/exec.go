package health

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// maxExecOutput bounds the probe output kept for a Detail, so a chatty probe
// can log at most this much per failure.
const maxExecOutput = 1 << 10

// execChecker runs a command through a CommandRunner: exit 0 is success.
type execChecker struct {
	runner CommandRunner
	argv   []string
	env    []string
	dir    string
}

var _ Checker = (*execChecker)(nil)

// NewExecChecker returns a checker that runs argv with env in dir.
func NewExecChecker(runner CommandRunner, argv, env []string, dir string) (Checker, error) {
	if runner == nil {
		return nil, errors.New("exec probe: no command runner")
	}
	if len(argv) == 0 {
		return nil, errors.New("exec probe: empty command")
	}
	return &execChecker{runner: runner, argv: argv, env: env, dir: dir}, nil
}

func (c *execChecker) Check(ctx context.Context) Result {
	start := time.Now()
	code, out, err := c.runner.RunCommand(ctx, c.argv, c.env, c.dir, maxExecOutput)
	output := clip(string(bytes.TrimSpace(out)), maxExecOutput)
	if err != nil {
		// Before cutShort: EAGAIN from fork reads as a timeout to net.Error.
		if r, ok := ownLimit(err, true); ok && ctx.Err() == nil {
			return r
		}
		if r, ok := cutShort(ctx, start, err); ok {
			return withOutput(r, output)
		}
		return failure("%v", err)
	}
	if code != 0 {
		return withOutput(failure("exit code %d", code), output)
	}
	return withOutput(Result{OK: true, Detail: "exit code 0"}, output)
}

// withOutput appends the command's output to r's Detail.
func withOutput(r Result, output string) Result {
	if output != "" {
		r.Detail = fmt.Sprintf("%s: %s", r.Detail, output)
	}
	return r
}
