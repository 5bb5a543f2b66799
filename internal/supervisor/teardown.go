// The teardown: reverse dependency order within shutdown_timeout, the second
// signal and cancellation (SIGKILL to all), process groups that outlive their
// leader, and the bound after the final SIGKILL.

package supervisor

import (
	"fmt"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// teardown enters the stopping phase. The first cause wins.
func (s *Supervisor) teardown(o Outcome, now time.Time) {
	if s.phase == PhaseStopping {
		return
	}
	if !s.haveResult {
		s.outcome, s.haveResult = o, true
	}
	s.phase = PhaseStopping
	if s.onTeardown != nil {
		s.onTeardown()
	}
	s.deadline = now.Add(s.cfg.ShutdownTimeout)
	s.outcome.Deadline = s.deadline
	s.tl.TeardownBegan(s.outcome.Detail, s.cfg.ShutdownTimeout, now)
	if s.outcome.Process != "" {
		s.tl.TeardownCause(s.outcome.Process)
	}
	s.log.Info("teardown started", "cause", o.Detail, "shutdown_timeout", s.cfg.ShutdownTimeout.String())
	// Probes of stopping processes must not restart anything (docs/reliability.md, C13);
	// only a ready check with while_stopping goes on, for the ready state.
	for _, r := range s.recs {
		s.stopProbes(r, true)
		r.wantStop = intentNone // teardown orders every stop from now on
	}
	s.publish() // /readyz must turn 503 before the first stop signal goes out
	s.startEarlyHooks(now)
}

func (s *Supervisor) fatal(r *record, code int, why string, now time.Time) {
	s.setState(r, Failed)
	r.reason = why
	s.log.Error("fatal failure", "process", r.p.Name, "reason", why)
	s.teardown(Outcome{Reason: ReasonFatal, Process: r.p.Name, Code: code, Detail: r.p.Name + ": " + why}, now)
}

// killAll sends SIGKILL to every live group and cuts off every stop.command
// still running, including those of processes that already exited.
func (s *Supervisor) killAll(why string) {
	s.killingAll = true
	for _, r := range s.recs {
		if r.cur.child != nil && !r.cur.killed {
			s.kill(r, why)
		}
		s.killOld(r, why)
		if r.cur.cancelHook != nil {
			r.cur.cancelHook()
		}
	}
}

func (s *Supervisor) kill(r *record, why string) {
	if r.cur.cancelHook != nil {
		r.cur.cancelHook() // SIGKILL ends the stop: its hook goes too
	}
	r.cur.killed = true
	r.cur.killedAt = time.Now()
	if r.state == Starting || r.state == Running {
		s.setState(r, Stopping)
	}
	if s.phase == PhaseStopping && !r.p.Sidecar {
		// A restart's escalation does not count, nor a sidecar's (the
		// pod's phase ignores sidecars).
		s.outcome.Killed = true
	}
	s.log.Warn("sending SIGKILL", "process", r.p.Name, "pid", r.cur.pid, "reason", why)
	if err := r.cur.child.Signal(proc.SIGKILL); err != nil {
		s.log.Warn("kill", "process", r.p.Name, "err", err)
	}
	s.tl.Signalled(r.p.Name, r.cur.gen, proc.SIGKILL, time.Now())
}

// stopWaveBudget bounds the time one teardown step goes on beginning stops
// (a stop signal and a SIGCONT each, or a stop.command), so the loop answers
// pings and hears of exits between waves. 10,000 at once kept /livez waiting
// for 0.5-0.7 s, and waves of 256 for up to 0.1 s: with thousands of
// children exiting on two vCPUs a stop took 80 µs of the loop's time. The
// rest follow in the next step, as soon as pending events are handled.
const stopWaveBudget = 5 * time.Millisecond

func (s *Supervisor) stepTeardown(now time.Time) {
	pastDeadline := !now.Before(s.deadline)
	s.pastDeadline = s.pastDeadline || pastDeadline
	s.moreStops = false
	began, budget := 0, time.Now().Add(stopWaveBudget)
	for i := len(s.recs) - 1; i >= 0; i-- {
		r := s.recs[i]
		switch r.state {
		case Pending, Backoff:
			if r.state == Backoff && s.stepTeardownRestart(r, now) { // termrestart.go
				break
			}
			s.setState(r, Stopped)
			if r.reason == "" {
				r.reason = "not started: shutting down"
			}
		case Starting, Running:
			if r.cur.child != nil && !s.dependentsAlive(r) {
				if began > 0 && (s.moreStops || time.Now().After(budget)) {
					s.moreStops = true
					break
				}
				began++
				s.beginStop(r, intentNone, now)
			}
		case Stopping:
			s.escalate(r, now)
		case Completed:
			s.stopCompleted(r, now) // completion.go
		}
		if pastDeadline && r.cur.child != nil && !r.cur.killed {
			switch {
			case r.p.Stop.MinGrace == 0:
				s.kill(r, "shutdown_timeout "+s.cfg.ShutdownTimeout.String()+" reached")
			case r.cur.signalledAt.IsZero():
				s.lastStop(r, now) // SIGKILL min_grace after the signal
			default:
				// Signalled already (a stop begun before the teardown
				// included): SIGKILL once min_grace has passed since.
				if by := r.cur.signalledAt.Add(r.p.Stop.MinGrace); by.Before(r.cur.due) {
					r.cur.due = by
				}
				if !now.Before(r.cur.due) {
					s.kill(r, "shutdown_timeout "+s.cfg.ShutdownTimeout.String()+" reached")
				}
			}
		}
	}
	if at := s.abandonAt(); !at.IsZero() && !now.Before(at) {
		// A child in uninterruptible sleep (a hung NFS mount, a FUSE
		// server gone) survives SIGKILL until the kernel lets it go;
		// podvisor must not wait for it forever.
		var pids []string
		for _, r := range s.recs {
			if r.cur.child != nil {
				pids = append(pids, fmt.Sprintf("%s (pid %d)", r.p.Name, r.cur.pid))
			}
		}
		s.log.Error("processes still alive "+finalGrace.String()+" after SIGKILL (uninterruptible sleep?): exiting without them", "processes", strings.Join(pids, ", "))
		s.abandoned = true
	}
}

// finalGrace is how long podvisor waits for children that got SIGKILL
// before it gives up on them and exits.
const finalGrace = 5 * time.Second

// abandonAt is when to give up waiting for SIGKILLed children: finalGrace
// after the last SIGKILL, once every live child has had one; zero while
// some live child has not been killed.
func (s *Supervisor) abandonAt() time.Time {
	var last time.Time
	for _, r := range s.recs {
		if r.cur.child == nil {
			continue
		}
		if !r.cur.killed {
			return time.Time{}
		}
		if r.cur.killedAt.After(last) {
			last = r.cur.killedAt
		}
	}
	if last.IsZero() {
		return last
	}
	return last.Add(finalGrace)
}

// groupPoll is how often a lingering process group is checked for members.
const groupPoll = 20 * time.Millisecond

// settleGroups completes the exit of every lingering record whose process
// group is now empty. Until then the record stays stopping and alive, so its
// dependencies wait and escalate sends SIGKILL to the group at its due time.
func (s *Supervisor) settleGroups(now time.Time) {
	for _, r := range s.recs {
		if r.cur.lingering == nil || now.Before(r.cur.pollAt) {
			continue
		}
		if r.cur.child.GroupAlive() {
			r.cur.pollAt = now.Add(groupPoll)
			continue
		}
		ex := *r.cur.lingering
		r.cur.lingering = nil
		s.onExit(r, ex, now)
	}
}

// unkilled reports whether a live child has not been sent SIGKILL yet.
func (s *Supervisor) unkilled() bool {
	for _, r := range s.recs {
		if r.cur.child != nil && !r.cur.killed || r.old != nil && !r.old.killed {
			return true
		}
	}
	return false
}
