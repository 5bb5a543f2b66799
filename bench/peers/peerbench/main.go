// Command peerbench is the measuring half of bench/peers/run.sh. It starts
// a supervisor (podvisor or a peer), watches it from the outside through
// /proc and the files it writes, and prints one line of key=value figures.
// Every supervisor is observed the same way, so the figures compare like
// with like; what each mode measures is documented on the mode.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

const usage = `usage: peerbench MODE [flags] [-- COMMAND...]
modes:
  lifecycle  start COMMAND, time until -n marker processes run, memory of
             the supervisor's own processes, then time SIGTERM until the
             supervisor exited and no marker process is left
  idle       start every supervisor of a spec file, then CPU each used
             over one shared idle window
  logs       start COMMAND, time until -last appears at the end of -file
  zombies    start COMMAND (a supervisor as PID 1 under unshare), wait for
             its orphans to exit, count zombies left in the namespace
  chain      start COMMAND, time the readiness hops of a dependency chain
             from the events its links append to -events
run "peerbench MODE -h" for a mode's flags`

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	modes := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"lifecycle": lifecycle,
		"idle":      idle,
		"logs":      logs,
		"zombies":   zombies,
		"chain":     chain,
	}
	run, ok := modes[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "peerbench: unknown mode %q\n%s\n", args[0], usage)
		return 2
	}
	// An interrupted benchmark still cleans up: the supervisors run in their
	// own process groups, so only peerbench sees the driver's Ctrl-C, and
	// the modes' deferred cleanup runs once ctx is done.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		fmt.Fprintf(stderr, "peerbench %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// child is one started supervisor. A goroutine waits for it, so exit is
// observable without blocking.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, valid once done is closed
}

// start runs argv with stdin on /dev/null and stdout and stderr on out
// (or /dev/null), in its own process group so that a Ctrl-C meant for the
// benchmark driver does not reach it directly.
func start(argv []string, out string) (*child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command given")
	}
	name := out
	if name == "" {
		name = os.DevNull
	}
	w, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open output: %w", err)
	}
	defer w.Close() // the child holds its own copy
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// early is the error for a supervisor that exited while it should be running.
func (c *child) early() error {
	return fmt.Errorf("%s exited early: %v", c.cmd.Path, c.err)
}

// stop sends SIGTERM to pid (the supervisor, or for a PID namespace its
// PID 1) and waits for c to exit.
func (c *child) stop(pid int, timeout time.Duration) error {
	if c.exited() {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	return c.wait(timeout)
}

// wait waits for c to exit after it was signalled. After timeout it kills
// the whole tree and reports that the stop was not clean.
func (c *child) wait(timeout time.Duration) error {
	select {
	case <-c.done:
		return nil
	case <-time.After(timeout):
		c.kill()
		return fmt.Errorf("%s did not exit within %v of SIGTERM", c.cmd.Path, timeout)
	}
}

// kill sends SIGKILL to c and every descendant and waits for c. It is the
// cleanup path after a failed measurement, so it never reports errors.
func (c *child) kill() {
	if c.exited() {
		return
	}
	if tr, err := tree(c.pid()); err == nil {
		for _, p := range tr {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// poll calls cond every interval until it holds, fails, timeout passes or
// ctx is done.
func poll(ctx context.Context, timeout, interval time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not done within %v", what, timeout)
		}
		if err := pause(ctx, interval); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
}

// pause waits for d unless ctx is done first.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// killMarked sends SIGKILL to every process still running m's command line.
// The markers are unique to the benchmark, so these are processes it
// started that outlived their supervisor after a failed measurement.
func killMarked(m marker) {
	ps, err := pids()
	if err != nil {
		return
	}
	for _, pid := range ps {
		if m.is(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// checkClean refuses to measure while processes from an earlier run still
// carry the marker: they would be counted as this run's.
func checkClean(m marker, argv string) error {
	n, err := m.count()
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("%d processes already run %q (left from an earlier run?)", n, argv)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// flags makes a mode's flag set; errors and -h output go to stderr.
func flags(mode string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
