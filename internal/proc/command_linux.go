package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

const (
	// outputGrace bounds the wait for the output pipe's EOF once the command
	// exited and its group was killed: a process that left the group can
	// still hold the pipe open (docs/reliability.md, C2).
	outputGrace = 250 * time.Millisecond
	// killWait bounds the wait for the command's exit after SIGKILL when ctx
	// is done (a process in uninterruptible sleep dies late).
	killWait = time.Second
)

// RunCommand runs argv to completion for exec probes and hooks: in its own
// process group, stdin /dev/null, stdout and stderr captured together into at
// most maxOutput bytes (the rest is read and discarded, so the command never
// blocks on a full pipe). code is the exit code, 128+N for a death by signal
// N.
//
// When the command exits, whatever is left of its process group is killed, and
// output is collected only for a short while longer, so a background child
// holding the pipe cannot delay the result. When ctx is done first, the whole
// group gets SIGKILL and RunCommand returns promptly with ctx.Err() wrapped
// (code is then 137 if the kill was observed, else -1). The only other error
// is a *SpawnError (code is then 127 or 126).
func (r *Reaper) RunCommand(ctx context.Context, argv []string, env []string, dir string, maxOutput int) (code int, output []byte, err error) {
	return r.RunCommandAs(ctx, nil, argv, env, dir, maxOutput)
}

// RunCommandAs is RunCommand with the command running as cred (nil: as
// podvisor). Probes and hooks of a process run as that process's user, never
// with podvisor's own privileges.
func (r *Reaper) RunCommandAs(ctx context.Context, cred *Cred, argv []string, env []string, dir string, maxOutput int) (code int, output []byte, err error) {
	return r.RunCommandIn(ctx, "", cred, argv, env, dir, maxOutput)
}

// RunCommandIn is RunCommandAs inside root (Spec.Root; "": this machine's),
// where the exec probes and hooks of a process with a root run.
func (r *Reaper) RunCommandIn(ctx context.Context, root string, cred *Cred, argv []string, env []string, dir string, maxOutput int) (code int, output []byte, err error) {
	name := ""
	if len(argv) > 0 {
		name = argv[0]
	}
	if err := ctx.Err(); err != nil {
		return -1, nil, fmt.Errorf("run %q: %w", name, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return -1, nil, &SpawnError{Argv0: name, Reason: "output pipe: " + errText(err), Err: err}
	}
	defer pr.Close()
	c, err := Spawn(r, Spec{Argv: argv, Env: env, Dir: dir, Root: root, Cred: cred, Stdout: pw, Stderr: pw, DeathSignal: syscall.SIGKILL})
	pw.Close() // the child has its copy; EOF must come when the child's copies close
	if err != nil {
		code = 126
		var se *SpawnError
		if errors.As(err, &se) {
			code = se.Code()
		}
		return code, nil, err
	}

	outc := make(chan []byte, 1)
	go func() { outc <- readBounded(pr, maxOutput) }()

	code = -1
	var ctxErr error
	select {
	case ex := <-c.Done():
		code = ex.Code()
	case <-ctx.Done():
		ctxErr = ctx.Err()
		_ = c.Signal(syscall.SIGKILL)
		t := time.NewTimer(killWait)
		select {
		case ex := <-c.Done():
			code = ex.Code()
		case <-t.C:
		}
		t.Stop()
	}
	// Background members of the group must not outlive the command.
	_ = c.Signal(syscall.SIGKILL)

	t := time.NewTimer(outputGrace)
	defer t.Stop()
	select {
	case output = <-outc:
	case <-t.C:
		pr.Close() // interrupts the pending Read
		output = <-outc
	}
	if ctxErr != nil {
		return code, output, fmt.Errorf("run %q: %w", name, ctxErr)
	}
	return code, output, nil
}

// readBounded reads r to EOF or error, keeping the first max bytes.
func readBounded(r io.Reader, max int) []byte {
	var out []byte
	buf := make([]byte, 16<<10)
	for {
		n, err := r.Read(buf)
		if keep := min(n, max-len(out)); keep > 0 {
			out = append(out, buf[:keep]...)
		}
		if err != nil {
			return out
		}
	}
}
