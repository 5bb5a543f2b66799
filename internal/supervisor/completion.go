// What a process that ended as its user meant it to counts for: a
// completed oneshot or job is ready once its `ready` check, if any, has
// passed in that incarnation; a service with remain_after_exit stays
// `completed` and ready after a success exit its policy does not restart.
// The table of every type, condition and check is in
// docs/configuration.md ("Process types, conditions and checks").

package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// completedReady reports whether r, completed, counts as ready. A check
// that cannot run after the exit (a notification, a log line) is taken as
// passed by the success exit; a polled one must pass, after the exit if
// not before (awaitReadyAfterCompletion).
func completedReady(r *record) bool {
	if r.state != Completed {
		return false
	}
	if r.p.Type == config.Service {
		return r.p.RemainAfterExit
	}
	return r.p.Ready == nil || r.cur.readyOnce || !isPolled(r.p.Ready.Kind)
}

// jobReadyWhileRunning reports whether r, a job with a `ready` check, is
// ready while it runs: a job's completion ends the run, so its dependents
// on `ready` start on the check, not on its exit.
func jobReadyWhileRunning(r *record) bool {
	return r.p.Type == config.Job && r.p.Ready != nil && r.cur.ready && r.cur.startedUp &&
		r.cur.child != nil && r.state == Running
}

// awaitReadyAfterCompletion goes on checking the `ready` check of a oneshot
// or job that completed before it passed, so the check is never skipped.
func (s *Supervisor) awaitReadyAfterCompletion(r *record, now time.Time) {
	if r.p.Ready == nil || r.cur.readyOnce || !isPolled(r.p.Ready.Kind) || s.phase == PhaseStopping {
		return
	}
	s.log.Info("completed before its ready check passed: checking on", "process", r.p.Name, "last", r.cur.readyDetail)
	s.watch(s.incarnationCtx(r), r, r.p.Ready, "completed", now)
}

// onCompletedReady records a result of the ready check of a completed
// process: the first success makes it ready and ends the check.
func (s *Supervisor) onCompletedReady(r *record, e completedReadyEv, now time.Time) {
	r.cur.readyDetail = e.detail
	if !e.ready || r.state != Completed || r.cur.readyOnce {
		return
	}
	r.cur.readyOnce, r.cur.readyAt = true, now
	s.tl.Ready(r.p.Name, r.cur.gen, now)
	s.log.Info("ready", "process", r.p.Name, "after", now.Sub(r.cur.startedAt).Round(time.Millisecond).String())
	s.stopProbes(r, false)
}

// stopCompleted runs the stop.command of a completed process in the
// teardown, once its dependents are gone, within stop.timeout clipped to
// shutdown_timeout: it is still active, as systemd runs ExecStop= of a
// RemainAfterExit=yes unit. Scheduled oneshots are idle between runs, and
// a process a reload removed is done with.
func (s *Supervisor) stopCompleted(r *record, now time.Time) {
	if !s.endHookDue(r) || s.dependentsAlive(r) {
		return
	}
	r.cur.hookEnded = true
	s.log.Info("running stop.command of completed process", "process", r.p.Name)
	s.runHook(r, s.stopDue(r, now), now)
}

// endHookDue reports whether r, completed, has a stop.command still to run
// in the teardown: until it has run, r's dependencies wait for it as for a
// running dependent.
func (s *Supervisor) endHookDue(r *record) bool {
	return r.state == Completed && len(r.p.Stop.Command) > 0 && !r.cur.hookEnded && r.p.Schedule == nil && !r.op.gone &&
		s.phase == PhaseStopping && !s.killingAll
}
