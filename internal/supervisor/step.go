// One step of the loop: after every event, each record is moved as far as it
// can go (starts in waves, wanted stops, teardown, escalation); nextWake
// (wake.go) says when the loop must look again without an event.

package supervisor

import (
	"strings"
	"time"
)

// step applies the start, restart, timeout and teardown rules at now. Records
// are in topological order, so a start that satisfies a dependent's `started`
// condition is seen by that dependent in the same pass.
func (s *Supervisor) step(now time.Time) {
	s.settleGroups(now) // first: an exit may start the teardown
	s.restartAllOver(now)
	s.stepOverlaps(now)
	if s.phase == PhaseStopping {
		s.stepTeardown(now)
		return
	}
	if s.stepJobsDone(now); s.phase == PhaseStopping {
		s.stepTeardown(now)
		return
	}
	s.stepWantedStops(now)
	s.stepSidecarHold(now) // sidecarhold.go: after stops begin their stop.command
	s.stepSchedules(now)
	// Starts happen in waves: everything startable is launched together,
	// then the pass repeats, since a start can satisfy a dependent's
	// `started` condition. A wave is at most maxWave launches; the rest
	// waits for the next step (see moreStarts).
	s.moreStarts = false
	for !s.moreStarts {
		var starts []*record
		for _, r := range s.recs {
			switch r.state {
			case Pending:
				if r.wantStop == intentNone && !s.restartingAll && scheduleAllows(r) && s.depsHold(r, now) && s.afterGone(r) {
					if r.relaunch {
						r.relaunch = false
						r.count.restarts++
						if r.reason == reasonFollows {
							r.count.followed++ // not its own failure: not against restart.limit
						}
					}
					starts = append(starts, r)
				}
			case Backoff:
				if !reached(s.backoffEnd(r), now) || !s.afterGone(r) {
					break
				}
				if !s.depsHold(r, now) {
					// Its dependency is itself down: restarting now would
					// start it against nothing. It waits like a new start.
					s.setState(r, Pending)
					r.relaunch = true
					s.log.Info("restart waits for dependencies", "process", r.p.Name, "waiting_for", strings.Join(s.waitingFor(r), ", "))
					break
				}
				r.count.restarts++
				starts = append(starts, r)
			case Starting:
				if r.wantStop != intentNone {
					break
				}
				if s.watchdogMissed(r, now) {
					break
				}
				if reached(s.startDeadline(r), now) {
					s.log.Warn("start timeout", "process", r.p.Name, "start_timeout", r.p.StartTimeout.String(), "last", r.cur.readyDetail)
					r.reason = "start timeout " + r.p.StartTimeout.String() + " exceeded"
					r.cur.failedBy = awaited(r)
					s.requestStop(r, intentFail, now)
				} else if reached(s.remindDue(r), now) {
					s.log.Info("still waiting for readiness", "process", r.p.Name, "check", awaited(r).Kind.String(), "last", r.cur.readyDetail, "waited", now.Sub(r.cur.startedAt).Round(time.Second).String())
					r.cur.remindAt = now.Add(reminderEvery)
				}
			case Running:
				if !s.watchdogMissed(r, now) {
					s.stepStartup(r, now) // jobprobes.go
				}
			case Stopping:
				s.escalate(r, now)
			}
		}
		if len(starts) == 0 {
			break
		}
		if len(starts) > maxWave {
			starts, s.moreStarts = starts[:maxWave], true
		}
		if n := s.startAll(starts, now); n < len(starts) {
			s.moreStarts = true
		}
		if s.phase == PhaseStopping { // a start failed fatally
			s.stepTeardown(now)
			return
		}
	}
	s.stepOverlaps(now) // a new incarnation that started ready lets its old one go now
	if s.phase == PhaseStarting && s.allReady() {
		s.phase = PhaseRunning
		s.log.Info("all processes ready")
		if f := s.onRunning; f != nil {
			s.onRunning = nil
			f()
		}
	}
}

// maxWave bounds the launches of one step (see also waveBudget), so the
// loop stays responsive (/livez) while thousands start.
const maxWave = 1024
