// Exits: what an exit means for a record (completed, failed, restart with
// backoff) and the restart decisions.

package supervisor

import (
	"fmt"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

func (s *Supervisor) onExit(r *record, ex proc.Exit, now time.Time) {
	code := ex.Code()
	oom := s.oomKilled(r, ex)
	rule := s.matchRule(r, ex) // before recordExit: the timeline names the rule
	s.recordExit(r, r.cur.gen, code, oom, ruleLabel(r, rule), ex.At)
	last := code // code itself may be replaced below by the fatal outcome's code
	r.exitCode, r.exitedAt = &last, ex.At
	r.cur.child, r.cur.pid = nil, 0
	s.alive--
	s.stopProbes(r, false)
	if r.cur.stopCmd {
		r.cur.stopCmd = false // its done event is now stale
		if r.cur.cancelHook != nil {
			r.cur.cancelHook() // the process is gone: its hook has nothing left to stop
			r.cur.cancelHook = nil
		}
	}
	ran := now.Sub(r.cur.startedAt)
	r.cur.ready = false
	success := r.p.IsSuccess(code)

	if s.phase == PhaseStopping {
		if s.teardownExit(r, code, ran, now) { // termrestart.go
			return
		}
		if r.p.Type != config.Service && success && r.state != Stopping {
			s.setState(r, Completed)
		} else {
			s.setState(r, Stopped)
		}
		s.log.Info("exited", "process", r.p.Name, "code", code)
		return
	}

	intent := r.cur.intent
	r.cur.intent = intentNone
	if s.operatorExit(r, intent, code) {
		return
	}
	if intent == intentRestartAll {
		s.restartAllExit(r, code)
		return
	}
	if rule >= 0 {
		s.applyRule(r, rule, code, ran, now)
		return
	}
	if intent == intentSelf && s.selfStopped(r, ex, ran, now) {
		return
	}
	if intent == intentCascade {
		s.setState(r, Pending)
		r.relaunch = true // its start again counts as a restart
		r.reason = reasonFollows
		s.log.Info("stopped for dependency restart", "process", r.p.Name, "code", code)
		return
	}
	failed := !success || intent == intentFail
	if intent == intentFail {
		code = -1 // podvisor stopped it; its own exit code says nothing
	}

	if !failed {
		switch {
		case r.p.Type != config.Service:
			s.setState(r, Completed)
			s.log.Info("completed", "process", r.p.Name, "after", ran.Round(time.Millisecond).String())
			s.awaitReadyAfterCompletion(r, now) // completion.go
			if r.p.Type == config.Job && s.allJobsDone() {
				if at := s.exitNoticed(r); !at.IsZero() {
					s.jobsDoneAt = at // pace.go: the pod ends at the next relist
				} else {
					s.teardown(Outcome{Reason: ReasonJobsDone, Detail: "all jobs completed"}, now)
				}
			}
			return
		case r.p.Restart.Policy != config.Always && r.p.RemainAfterExit:
			s.setState(r, Completed)
			s.log.Info("completed (remain_after_exit)", "process", r.p.Name, "code", code)
			return
		case r.p.Restart.Policy != config.Always:
			s.setState(r, Stopped)
			r.reason = fmt.Sprintf("exited with code %d", code)
			s.log.Info("exited", "process", r.p.Name, "code", code, "restart", r.p.Restart.Policy.String())
			return
		}
		s.log.Warn("exited", "process", r.p.Name, "code", code, "ran", ran.Round(time.Millisecond).String())
		s.scheduleRestart(r, ran, now)
		return
	}

	if r.reason == "" || intent != intentFail {
		r.reason = fmt.Sprintf("exited with code %d", code)
		if r.cur.errno > 0 {
			r.reason += errnoText(r.cur.errno) // what it said it failed with (sd_notify ERRNO=)
		}
	}
	if oom {
		r.reason = ReasonOOMKilled
	}
	s.onFailure(r, code, ran, now)
}

// onFailure applies the restart policy to a failed start or run: restart
// with backoff, or give up, which is fatal.
func (s *Supervisor) onFailure(r *record, code int, ran time.Duration, now time.Time) {
	if r.p.Restart.Policy == config.Never {
		s.fatal(r, code, r.reason, now)
		return
	}
	if r.p.Restart.Limit > 0 && r.count.restarts-r.count.followed >= r.p.Restart.Limit {
		s.fatal(r, code, fmt.Sprintf("%s; restart limit %d reached", r.reason, r.p.Restart.Limit), now)
		return
	}
	s.log.Warn("failed", "process", r.p.Name, "reason", r.reason, "ran", ran.Round(time.Millisecond).String())
	s.scheduleRestart(r, ran, now)
}

func (s *Supervisor) scheduleRestart(r *record, ran time.Duration, now time.Time) {
	rs := r.p.Restart
	r.backoff.delay = nextBackoff(r.backoff.delay, rs.Backoff, rs.MaxBackoff, ran, config.BackoffResetAfter)
	s.setState(r, Backoff)
	r.backoff.until = now.Add(r.backoff.delay)
	s.log.Info("restarting", "process", r.p.Name, "in", r.backoff.delay.String(), "restarts", r.count.restarts+1)
	s.requestStop(r, intentCascade, now) // r has no child: only its dependents
}

func (s *Supervisor) allJobsDone() bool {
	for _, r := range s.recs {
		if r.p.Type == config.Job && r.state != Completed && !r.op.gone && !r.op.outside && !r.ruleStop {
			return false
		}
	}
	return true
}
