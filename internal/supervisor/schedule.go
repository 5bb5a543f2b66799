// Schedules (`schedule:` on a oneshot): the process runs at each tick of its
// cron expression or interval, not at the start-up. A tick makes it pending
// with a run due (runDue), and the ordinary start rule starts it once its
// dependencies hold. Ticks are wall-clock instants, compared with the wall
// clock (Options.WallClock, injectable): after a clock jump past several
// ticks, the next wake-up runs it once and computes the next tick from now.
// A tick while a run is still going is skipped (concurrency: forbid, counted)
// or stops it and starts anew (replace).

package supervisor

import (
	"hash/fnv"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// wall is the wall-clock time used for schedules, without a monotonic
// reading: ticks are calendar instants.
func (s *Supervisor) wall() time.Time {
	if s.wallClock != nil {
		return s.wallClock().Round(0)
	}
	return time.Now().Round(0)
}

// scheduleAllows reports whether r may start now as far as its schedule
// goes: always without one, else only for a due run.
func scheduleAllows(r *record) bool {
	return r.p.Schedule == nil || r.sched.runDue
}

// nextTick is r's first tick after t, jitter included. The jitter is a
// hash of the name and the tick, so processes on one schedule spread out
// and a run is reproducible.
func nextTick(r *record, t time.Time) time.Time {
	sc := r.p.Schedule
	next := sc.Next(t)
	if next.IsZero() || sc.Jitter <= 0 {
		return next
	}
	h := fnv.New64a()
	h.Write([]byte(r.p.Name))
	h.Write([]byte(next.UTC().Format(time.RFC3339)))
	return next.Add(time.Duration(h.Sum64() % uint64(sc.Jitter)))
}

// stepSchedules fires the ticks that are due (phase not stopping).
func (s *Supervisor) stepSchedules(now time.Time) {
	var wall time.Time
	for _, r := range s.recs {
		if r.p.Schedule == nil || r.op.gone {
			continue
		}
		if wall.IsZero() {
			wall = s.wall()
		}
		if r.sched.nextRun.IsZero() {
			r.sched.nextRun = nextTick(r, wall)
			continue
		}
		if wall.Before(r.sched.nextRun) {
			continue
		}
		missed := r.sched.nextRun
		r.sched.nextRun = nextTick(r, wall) // from now: missed ticks run once, not each
		if r.op.held {
			continue // podvisor stop holds it down, schedule or not
		}
		s.tick(r, missed, now)
	}
}

func (s *Supervisor) tick(r *record, at, now time.Time) {
	switch r.state {
	case Completed, Stopped, Failed:
		s.setState(r, Pending)
		r.sched.runDue, r.reason = true, ""
		s.log.Info("scheduled run", "process", r.p.Name, "tick", at.Format(time.RFC3339), "next", r.sched.nextRun.Format(time.RFC3339))
	case Pending:
		r.sched.runDue = true // starts once its dependencies hold
		s.log.Info("scheduled run", "process", r.p.Name, "tick", at.Format(time.RFC3339), "next", r.sched.nextRun.Format(time.RFC3339))
	default: // starting, running, backoff, stopping: the last run goes on
		if r.p.Schedule.Concurrency == config.Replace && r.cur.child != nil && r.state != Stopping {
			s.log.Info("scheduled run replaces the running one", "process", r.p.Name, "tick", at.Format(time.RFC3339))
			r.sched.runDue = true
			s.requestStop(r, intentRestart, now)
			return
		}
		r.sched.skipped++
		s.log.Warn("scheduled run skipped: the last one is still going", "process", r.p.Name, "state", r.state.String(),
			"tick", at.Format(time.RFC3339), "next", r.sched.nextRun.Format(time.RFC3339))
	}
}

// scheduleWake is when step must look at r's schedule (zero: never). The
// timer is monotonic, so after a wall-clock jump the tick is seen at the
// next wake-up of any kind, or at this one.
func (s *Supervisor) scheduleWake(r *record, now time.Time) time.Time {
	if r.p.Schedule == nil || r.op.gone || r.sched.nextRun.IsZero() || s.phase == PhaseStopping {
		return time.Time{}
	}
	return now.Add(r.sched.nextRun.Sub(s.wall()))
}
