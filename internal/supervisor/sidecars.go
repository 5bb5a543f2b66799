// The kubelet's lifecycle for processes that ask for it (kube play sets the
// options): a sidecar's start gate (seen running after its exec), stop
// commands that all start when the teardown begins (stop.command_first), and
// a stop signal with at least stop.min_grace before SIGKILL, even once
// shutdown_timeout has passed.

package supervisor

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// seenWithin bounds the wait for a sidecar to be seen asleep: one that never
// sleeps (a busy loop) counts as running after it. The kubelet sees a started
// container at a later sync, about a second on.
const seenWithin = time.Second

// seenPoll is how often /proc is read while a sidecar is watched.
const seenPoll = 2 * time.Millisecond

// watchSeen arranges for r.seen: at once for a process that is no sidecar or
// whose child cannot be watched (test fakes), else from a goroutine that
// reads /proc/PID/stat until the child has slept once (it has run its own
// first instructions: a process that has just exec'd is runnable until it
// first blocks), has gone, or seenWithin has passed.
func (s *Supervisor) watchSeen(r *record, child Child) {
	pc, ok := child.(*proc.Child)
	if !r.p.Sidecar || !ok {
		r.cur.seen = true
		return
	}
	idx, gen, pid := r.idx, r.cur.gen, pc.Pid()
	ctx := s.probeCtx
	go func() {
		path := "/proc/" + strconv.Itoa(pid) + "/stat"
		t := time.NewTicker(seenPoll)
		defer t.Stop()
		until := time.Now().Add(seenWithin)
		for !slept(path) && time.Now().Before(until) {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		s.send(seenEv{idx: idx, gen: gen})
	}()
}

// slept reports whether the process of a /proc/PID/stat file is not
// runnable now (asleep, stopped, a zombie), or gone.
func slept(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	switch b[i+2] {
	case 'R', 'D', 'W':
		return false // running, or paging its image in
	}
	return true
}

// startEarlyHooks starts, when the teardown begins, the stop.command of every
// live process with stop.command_first; each gets its whole stop budget. The
// stop signal waits for the process's turn and for its command.
func (s *Supervisor) startEarlyHooks(now time.Time) {
	for _, r := range s.recs {
		if r.cur.child == nil || !r.p.Stop.CommandFirst || len(r.p.Stop.Command) == 0 {
			continue
		}
		if r.state != Starting && r.state != Running {
			continue
		}
		r.cur.hookEarly = true
		s.runHook(r, s.stopDue(r, now), now)
	}
}

// runHook starts r's stop.command, cut off at by.
func (s *Supervisor) runHook(r *record, by, now time.Time) {
	r.cur.stopCmd = true
	s.stopCmds++
	s.tl.StopCommand(r.p.Name, r.cur.gen, false, nil, now)
	ctx, cancel := context.WithDeadline(s.probeCtx, by)
	r.cur.cancelHook = cancel
	idx, gen, p := r.idx, r.cur.gen, r.p
	go func() {
		defer cancel()
		err := s.launcher.StopCommand(ctx, p)
		s.send(stopCmdDoneEv{idx: idx, gen: gen, err: err})
	}()
}

// stopDue is when a stop that begins now must end: stop.timeout on, and in a
// teardown no later than shutdown_timeout (a command that began early counts
// from the teardown's start).
func (s *Supervisor) stopDue(r *record, now time.Time) time.Time {
	due := now.Add(r.p.Stop.Timeout)
	if s.phase == PhaseStopping && due.After(s.deadline) {
		due = s.deadline
	}
	return due
}

// lastStop is the stop of a process with stop.min_grace that shutdown_timeout
// reached before its stop signal: its command is cut off, and it gets the
// signal now and min_grace before SIGKILL.
func (s *Supervisor) lastStop(r *record, now time.Time) {
	if r.cur.cancelHook != nil {
		r.cur.cancelHook()
		r.cur.cancelHook = nil
	}
	if r.cur.stopCmd {
		r.cur.stopCmd = false
		s.tl.StopCommand(r.p.Name, r.cur.gen, true, context.DeadlineExceeded, now)
	}
	if r.state != Stopping {
		s.setState(r, Stopping)
		s.tl.StopRequested(r.p.Name, r.cur.gen, "shutdown_timeout "+s.cfg.ShutdownTimeout.String()+" reached", now)
	}
	r.cur.due = now
	s.sendStopSignal(r)
}
