// The invariants, checked inside the loop after every step, at every signal,
// at every launch, when quiescent and on the outcome.

package supervisor

import (
	"strings"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// checkStep runs in the loop goroutine after every step.
func (c *chaos) checkStep(now time.Time) {
	s := c.sup
	// The fake clock stands still while the loop runs: thousands of steps
	// at one instant mean the loop spins on a wake-up time in the past.
	if now.Equal(c.stepAt) {
		if c.stepsAt++; c.stepsAt == 10000 {
			c.violate("loop spins: 10000 steps at one instant")
			panic("loop spins; config:\n" + c.yaml + "\ntrace:\n" + strings.Join(c.trace, "\n"))
		}
	} else {
		c.stepAt, c.stepsAt = now, 0
	}
	alive := 0
	for _, r := range s.recs {
		if r.cur.child != nil {
			alive++
		}
		if r.old != nil {
			alive++ // the outgoing incarnation of a restart with overlap
		}
		c.checkNotify(r)
		switch r.state {
		case Pending, Backoff, Stopped, Completed, Failed:
			if r.cur.child != nil {
				c.violate("%s is %s with a live child", r.p.Name, r.state)
			}
		case Starting, Running, Stopping:
			if r.cur.child == nil {
				c.violate("%s is %s without a child", r.p.Name, r.state)
			}
		}
		if s.phase == PhaseStopping {
			continue
		}
		// A watchdog deadline is acted on in the step that sees it pass.
		if (r.state == Starting || r.state == Running) && r.wantStop == intentNone && !r.cur.watchdogDue.IsZero() && !now.Before(r.cur.watchdogDue) {
			c.violate("%s's watchdog deadline passed %v ago and it was not stopped", r.p.Name, now.Sub(r.cur.watchdogDue))
		}
		if r.p.Watchdog > 0 && r.cur.child != nil && r.state != Stopping && r.wantStop == intentNone && r.cur.watchdogDue.IsZero() {
			c.violate("%s runs with a watchdog configured but none armed", r.p.Name)
		}
		if r.state == Backoff && !now.Before(r.backoff.until) && !s.restartDependentsAlive(r) && !s.moreStarts && !awaitsStops(r) && !s.sidecarHeld(r) {
			c.violate("%s still in backoff %v past its due time with its restart allowed", r.p.Name, now.Sub(r.backoff.until))
		}
		// A full wave (maxWave) leaves the rest to the next step.
		// A restart-all holds every start until its stops are over.
		if r.state == Pending && r.wantStop == intentNone && s.depsHold(r, time.Now()) && !s.moreStarts && !awaitsStops(r) && !s.restartingAll && scheduleAllows(r) {
			c.violate("%s pending although its dependencies hold", r.p.Name)
		}
		c.checkHeld(r)
	}
	if s.phase != PhaseStopping {
		for _, r := range s.recs {
			if r.p.Schedule != nil && !r.sched.nextRun.IsZero() && !r.op.held && !r.op.gone && !s.wall().Before(r.sched.nextRun.Add(time.Second)) {
				c.violate("%s's tick %v is over a second past and not taken", r.p.Name, r.sched.nextRun)
			}
		}
	}
	if s.restartingAll && alive == 0 && !now.Before(s.restartAllAt) && s.phase != PhaseStopping {
		c.violate("restart-all still holds the starts with no child alive")
	}
	if alive != s.alive {
		c.violate("alive count %d, but %d records have a child", s.alive, alive)
	}
	c.checkWaiters()
	if s.phase == PhaseStopping {
		c.mu.Lock()
		c.deadline = s.deadline
		c.mu.Unlock()
	}
}

// checkSignal runs in the loop goroutine whenever a signal is sent to a
// process group.
func (c *chaos) checkSignal(name string, pid int, sig syscall.Signal) {
	s := c.sup
	now := time.Now()
	for _, r := range s.recs {
		if o := r.old; o != nil && o.pid == pid {
			c.checkOldSignal(r, sig, now)
			return
		}
	}
	r := c.rec(name)
	switch {
	case sig == syscall.SIGKILL:
		c.mu.Lock()
		sigAt := c.sigAt[name]
		if s.phase == PhaseStopping { // SPEC: exit 1 when teardown had to SIGKILL
			c.anyKill = true
			c.killSent = c.killSent || !r.p.Sidecar // a sidecar's does not count
		}
		c.mu.Unlock()
		g := r.p.Stop.MinGrace
		allowed := !now.Before(r.cur.due) || s.phase == PhaseStopping && !now.Before(s.deadline) && g == 0 || s.killingAll
		if !allowed && g > 0 && s.phase == PhaseStopping && !now.Before(s.deadline) && !r.cur.signalledAt.IsZero() {
			allowed = !now.Before(r.cur.signalledAt.Add(g)) // signalled before the teardown
		}
		if !allowed {
			c.violate("SIGKILL to %s before its stop timeout, the deadline or a second signal", name)
		}
		// stop.min_grace: a stop begun in the teardown always has its
		// signal, and min_grace after it, before SIGKILL.
		if g > 0 && s.phase == PhaseStopping && r.cur.intent == intentNone && !s.killingAll {
			if sigAt.IsZero() {
				c.violate("SIGKILL to %s (min_grace %v) without its stop signal first", name, g)
			} else if now.Sub(sigAt) < g {
				c.violate("SIGKILL to %s %v after its stop signal, less than its min_grace %v", name, now.Sub(sigAt), g)
			}
		}
	case sig == syscall.SIGHUP && r.p.Stop.Signal != syscall.SIGHUP:
		c.checkReloadSignal(r)
	case sig == r.p.Stop.Signal:
		c.checkSelfStopSignal(r)
		if s.phase == PhaseStopping {
			c.mu.Lock()
			c.sigAt[name] = now
			c.mu.Unlock()
		}
		if s.pastDeadline && r.p.Stop.MinGrace > 0 {
			break // past shutdown_timeout every such process gets its signal at once
		}
		// A stop begun before the teardown (a restart's, whose hook was
		// still running) finishes as it began: it waited only for its
		// restart: true dependents.
		if s.phase == PhaseStopping && r.cur.intent == intentNone {
			for _, d := range r.dependents {
				if dr := s.recs[d]; dr.cur.child != nil {
					c.violate("%s signalled in teardown while its dependent %s is alive (%s)", name, dr.p.Name, dr.state)
				}
			}
		} else if s.phase != PhaseStopping && r.cur.intent != intentRestartAll { // restart-all: no order down, by design
			if r.cur.intent == intentHold || r.cur.intent == intentRemove {
				for _, d := range r.dependents {
					if dr := s.recs[d]; dr.cur.child != nil {
						c.violate("%s stopped by podvisor stop/reload while its dependent %s is alive (%s)", name, dr.p.Name, dr.state)
					}
				}
			}
			for _, d := range r.restartDeps {
				if dr := s.recs[d]; dr.cur.child != nil {
					c.violate("%s signalled while its restart: true dependent %s is alive (%s)", name, dr.p.Name, dr.state)
				}
			}
		}
	}
}

// checkLaunch runs when a process is launched (in the loop's goroutine or a
// launch goroutine of its wave, while the loop waits for the wave).
func (c *chaos) checkLaunch(name string) {
	s := c.sup
	r := s.byName[name]
	c.checkRename(name)
	c.mu.Lock()
	delete(c.sigAt, name)
	c.mu.Unlock()
	if s.phase == PhaseStopping && !c.restartAllowedInTeardown(r) {
		c.violate("%s started during teardown", name)
	}
	if r.op.held {
		c.violate("%s started while stopped by podvisor stop", name)
	}
	if s.restartingAll {
		c.violate("%s started while a restart-all still has children to stop", name)
	}
	for _, d := range r.deps {
		if dr := s.recs[d.idx]; !s.holds(dr, d.cond) {
			c.violate("%s started while %s does not hold %s (state %s)", name, dr.p.Name, d.cond, dr.state)
		}
	}
}

// restartAllowedInTeardown: only a sidecar with restart.during_termination
// may start in a teardown (KEP-4438), and only while a process that is no
// sidecar is still alive, before shutdown_timeout ran out, and when it had
// started before (a restart, not a first start).
func (c *chaos) restartAllowedInTeardown(r *record) bool {
	s := c.sup
	if !r.p.Sidecar || !r.p.Restart.DuringTermination || r.p.Restart.Policy == config.Never || !r.everStarted || s.pastDeadline {
		return false
	}
	// Alive as the loop knows it (checkLaunch runs on the loop): a child
	// whose exit the loop has not taken yet still counts.
	for _, o := range s.recs {
		if !o.p.Sidecar && o.cur.child != nil {
			return true
		}
	}
	return false
}

// checkQuiescent runs after the chaos settled: every process is where it
// can stay.
func (c *chaos) checkQuiescent() {
	snap := c.sup.Snapshot()
	c.checkMainPids(snap)
	blocked := map[string]bool{}
	for _, p := range snap.Processes {
		// A scheduled oneshot holds its dependents' conditions only between
		// a completed run and the next tick (and never, when a stop rule
		// ends each run): what waits on it waits for the ticks.
		if p.State == "stopped" || p.State == "failed" || p.State != "completed" && c.rec(p.Name).p.Schedule != nil {
			blocked[p.Name] = true
		}
	}
	// A pending process may wait forever only behind a dependency that
	// will not come back by itself.
	for changed := true; changed; {
		changed = false
		for _, p := range snap.Processes {
			if p.State != "pending" || blocked[p.Name] {
				continue
			}
			for _, w := range p.WaitingFor {
				dep, _, _ := strings.Cut(w, ":")
				if blocked[dep] {
					blocked[p.Name], changed = true, true
				}
			}
		}
	}
	for _, p := range snap.Processes {
		switch p.State {
		case "running", "completed", "stopped", "failed":
		case "pending":
			if !blocked[p.Name] && c.rec(p.Name).p.Schedule == nil { // a scheduled one waits for its tick
				c.violate("%s still pending after settling, waiting for %v", p.Name, p.WaitingFor)
			}
		default:
			c.violate("%s is %s after settling", p.Name, p.State)
		}
	}
}

func (c *chaos) checkOutcome(o Outcome) {
	c.mu.Lock()
	deadline, killed, anyKill, now := c.deadline, c.killSent, c.anyKill, c.endedAt
	c.mu.Unlock()
	c.logf("outcome: %+v exit %d", o, o.ExitCode())
	// stop.min_grace may keep a process past the deadline, by at most that.
	if !deadline.IsZero() && now.After(deadline.Add(c.minGrace+groupPoll)) && !anyKill {
		c.violate("teardown ended %v after its deadline without SIGKILL", now.Sub(deadline))
	}
	if !deadline.IsZero() && now.After(deadline.Add(c.minGrace+finalGrace+groupPoll)) {
		c.violate("teardown ended %v after shutdown_timeout", now.Sub(deadline))
	}
	if o.Killed != killed {
		c.violate("outcome.Killed=%v but SIGKILL sent=%v", o.Killed, killed)
	}
	snap := c.sup.Snapshot()
	switch o.Reason {
	case ReasonJobsDone:
		for _, p := range snap.Processes {
			// A job a stop rule ended counts as done (rules.go).
			if p.Type == "job" && p.State != "completed" && !(p.State == "stopped" && c.rec(p.Name).ruleStop) {
				c.violate("jobs done, but job %s is %s", p.Name, p.State)
			}
		}
	case ReasonFatal:
		found := false
		for _, p := range snap.Processes {
			found = found || p.Name == o.Process && p.State == "failed"
		}
		if !found {
			c.violate("fatal outcome names %q, which is not failed", o.Process)
		}
		if o.ExitCode() == 0 {
			c.violate("fatal outcome exits 0")
		}
	case ReasonRule:
		found := false
		for _, p := range snap.Processes {
			found = found || p.Name == o.Process && p.State == "stopped" && p.ExitCode != nil && *p.ExitCode == o.ExitCode() &&
				strings.Contains(p.Reason, "(shutdown)")
		}
		if !found {
			c.violate("shutdown rule outcome %+v does not match its process", o)
		}
	case ReasonSignal:
		if want := map[bool]int{false: 0, true: 1}[killed]; o.ExitCode() != want {
			c.violate("signal teardown exits %d, want %d", o.ExitCode(), want)
		}
	}
	for _, p := range snap.Processes {
		if p.Up {
			c.violate("%s still up after Run returned", p.Name)
		}
	}
}

// checkOldSignal: the outgoing incarnation of a restart with overlap is
// signalled only once the new one is ready or gone (or in teardown), and
// SIGKILLed only at its stop timeout, the deadline or a second signal.
func (c *chaos) checkOldSignal(r *record, sig syscall.Signal, now time.Time) {
	s, o := c.sup, r.old
	switch {
	case sig == syscall.SIGKILL:
		if s.phase == PhaseStopping {
			c.mu.Lock()
			c.killSent = true
			c.mu.Unlock()
		}
		if now.Before(o.due) && !s.killingAll && !(s.phase == PhaseStopping && !now.Before(s.deadline)) {
			c.violate("SIGKILL to the old incarnation of %s before its stop timeout", r.p.Name)
		}
	case sig == r.p.Stop.Signal:
		if (r.state == Pending || r.state == Starting) && s.phase != PhaseStopping {
			c.violate("the old incarnation of %s stopped while the new one is %s", r.p.Name, r.state)
		}
	}
}
