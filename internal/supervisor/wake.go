// When the loop must look again without an event: the earliest of the
// deadlines step acts on. Each deadline is one function, used both by the
// step that acts on it and by nextWake, so the two cannot drift apart; a
// zero deadline means no clock is running (an event, not the clock, moves
// the record on), and must stay zero where step would do nothing at it, or
// the loop would spin.

package supervisor

import "time"

// reached reports whether deadline at is set and has come by now.
func reached(at, now time.Time) bool {
	return !at.IsZero() && !now.Before(at)
}

// earliest is the earliest of the set instants in ts (zero: none).
func earliest(ts ...time.Time) time.Time {
	var w time.Time
	for _, t := range ts {
		if !t.IsZero() && (w.IsZero() || t.Before(w)) {
			w = t
		}
	}
	return w
}

// nextWake is the earliest instant at which step has something to do.
func (s *Supervisor) nextWake() time.Time {
	if s.moreStarts || s.moreStops {
		// The next wave, as soon as pending events are handled. Any past
		// instant does: Run arms the timer with max(wake-now, 0).
		return time.Unix(0, 1)
	}
	var w time.Time
	// Once the deadline has passed and everything got SIGKILL, only exit
	// events remain: waking at the past deadline again would spin the loop.
	if s.phase == PhaseStopping && !s.deadline.IsZero() && !s.pastDeadline && s.unkilled() {
		w = s.deadline
	}
	if s.phase == PhaseStopping {
		w = earliest(w, s.abandonAt())
	}
	w = earliest(w, s.restartAllWake(), s.jobsDoneAt)
	now := time.Now()
	for _, r := range s.recs {
		w = earliest(w, s.scheduleWake(r, now), s.oldStopDeadline(r), s.recordWake(r), s.paceWake(r, now))
	}
	return w
}

// recordWake is the earliest deadline of r's own state.
func (s *Supervisor) recordWake(r *record) time.Time {
	switch r.state {
	case Backoff:
		return s.backoffEnd(r)
	case Starting:
		return earliest(s.watchdogWake(r), s.startDeadline(r), s.remindDue(r))
	case Running:
		return earliest(s.watchdogWake(r), s.startupDeadline(r))
	case Stopping:
		return earliest(stopDeadline(r), lingerPoll(r))
	}
	return time.Time{}
}

// backoffEnd is when r's backoff ends. While restart: true dependents are
// still alive, or processes its reload removed, their exit event (not the
// clock) is what lets the restart go ahead.
func (s *Supervisor) backoffEnd(r *record) time.Time {
	if r.state != Backoff || (s.phase == PhaseStopping && (!s.restartsInTeardown(r) || !s.depsHoldInTeardown(r))) || s.restartDependentsAlive(r) || awaitsStops(r) || s.sidecarHeld(r) {
		return time.Time{}
	}
	return later(r.backoff.until, s.exitNoticed(r)) // pace.go: the restart waits for the relist
}

// startDeadline is when a starting service's start_timeout runs out. A start
// that is to stop (wantStop) waits for its dependents' exits, not for the
// clock; in teardown start timeouts no longer apply (waking for one would
// spin the loop until the process's turn to stop).
func (s *Supervisor) startDeadline(r *record) time.Time {
	if !startTimeoutRuns(r) || s.phase == PhaseStopping {
		return time.Time{}
	}
	return r.cur.due
}

// remindDue is when a starting service's next "still waiting for
// readiness" line is due.
func (s *Supervisor) remindDue(r *record) time.Time {
	if r.state != Starting || awaited(r) == nil || r.wantStop != intentNone || s.phase == PhaseStopping {
		return time.Time{}
	}
	return r.cur.remindAt
}

// startupDeadline is when a running oneshot's or job's start timeout runs
// out (jobprobes.go).
func (s *Supervisor) startupDeadline(r *record) time.Time {
	if !s.awaitsStartup(r) {
		return time.Time{}
	}
	return r.cur.due
}

// stopDeadline is when a stopping child gets SIGKILL (or, with min_grace
// and its command over budget, its stop signal: escalate).
func stopDeadline(r *record) time.Time {
	if r.cur.child == nil || r.cur.killed {
		return time.Time{}
	}
	return r.cur.due
}

// lingerPoll is when a stopping leader's lingering group is checked again.
func lingerPoll(r *record) time.Time {
	if r.cur.lingering == nil {
		return time.Time{}
	}
	return r.cur.pollAt
}

// oldStopDeadline is when the outgoing incarnation of an overlap restart
// gets SIGKILL, once its stop signal went out (overlap.go).
func (s *Supervisor) oldStopDeadline(r *record) time.Time {
	if o := r.old; o != nil && !o.signalledAt.IsZero() && !o.killed {
		return o.due
	}
	return time.Time{}
}
