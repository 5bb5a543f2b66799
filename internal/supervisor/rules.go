// Exit rules (restart.rules): the first rule matching an exit decides what
// follows it instead of the restart policy: restart, stop, restart-all or
// shutdown. restart-all replays the start-up of every process, as the
// kubelet's in-place pod restart does (KEP-5532): every child gets its stop
// signal at once, without stop.command and without the dependency order on
// the way down, and once none is left all start again in dependency order.

package supervisor

import (
	"fmt"
	"maps"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// matchRule returns the index of the rule that decides ex for r, or -1. Rules
// judge only exits that are the process's own: not in teardown, not after a
// stop podvisor began (a failed check, a cascade, an operator's verb).
func (s *Supervisor) matchRule(r *record, ex proc.Exit) int {
	if len(r.p.Restart.Rules) == 0 || s.phase == PhaseStopping || r.cur.intent != intentNone || r.op.held || r.op.gone {
		return -1
	}
	var sig proc.Signal
	if ex.Status.Signaled() {
		sig = ex.Status.Signal()
	}
	return r.p.Rule(ex.Code(), sig)
}

// ruleLabel is the reason label of rule i of r ("" for -1).
func ruleLabel(r *record, i int) string {
	if i < 0 {
		return ""
	}
	return r.p.Restart.Rules[i].Label(i)
}

// applyRule carries out rule i for r, which has just exited with code (its
// child is gone). It is called from onExit in place of the policy.
func (s *Supervisor) applyRule(r *record, i, code int, ran time.Duration, now time.Time) {
	rule := &r.p.Restart.Rules[i]
	label := rule.Label(i)
	if r.count.ruleMatches == nil {
		r.count.ruleMatches = map[string]int{}
	}
	r.count.ruleMatches[label]++
	r.reason = fmt.Sprintf("exited with code %d; %s", code, label)
	s.log.Warn("exit rule matched", "process", r.p.Name, "code", code, "rule", i+1, "action", rule.Action.String())
	switch rule.Action {
	case config.RuleRestart:
		if r.p.Restart.Limit > 0 && r.count.restarts-r.count.followed >= r.p.Restart.Limit {
			s.fatal(r, code, fmt.Sprintf("%s; restart limit %d reached", r.reason, r.p.Restart.Limit), now)
			return
		}
		s.scheduleRestart(r, ran, now)
	case config.RuleStop:
		s.setState(r, Stopped) // as after a success under restart: on-failure; dependents keep running
		r.ruleStop = true
		if r.p.Type == config.Job && s.allJobsDone() {
			s.teardown(Outcome{Reason: ReasonJobsDone, Detail: "all jobs completed"}, now)
		}
	case config.RuleShutdown:
		s.setState(r, Stopped)
		s.teardown(Outcome{Reason: ReasonRule, Process: r.p.Name, Code: code, Detail: r.p.Name + ": " + r.reason}, now)
	case config.RuleRestartAll:
		if r.p.Restart.Limit > 0 && r.count.restarts-r.count.followed >= r.p.Restart.Limit {
			s.fatal(r, code, fmt.Sprintf("%s; restart limit %d reached", r.reason, r.p.Restart.Limit), now)
			return
		}
		// The replayed start-up waits r's backoff, as its own restart
		// would: a crash loop must not become a hot loop of every process.
		rs := r.p.Restart
		r.backoff.delay = nextBackoff(r.backoff.delay, rs.Backoff, rs.MaxBackoff, ran, config.BackoffResetAfter)
		s.restartAllAt = now.Add(r.backoff.delay)
		s.restartAll(r, now)
	}
}

// restartAll stops every live child at once and makes every other process
// pending; step holds the starts (restartingAll) until no child is left.
func (s *Supervisor) restartAll(by *record, now time.Time) {
	s.restartingAll = true
	why := "restart-all: " + by.p.Name + " " + by.reason
	s.log.Warn("restarting every process", "by", by.p.Name, "reason", by.reason)
	for _, r := range s.recs {
		if r.op.gone || r.op.held {
			continue // removed, or held down by podvisor stop: neither comes back
		}
		r.wantStop = intentNone
		if r.cur.child == nil {
			s.setState(r, Pending)
			r.relaunch = r.everStarted
			if r != by {
				r.reason = why
			}
			continue
		}
		r.cur.intent = intentRestartAll
		if r.state == Stopping {
			continue // its stop is under way: its exit is what counts
		}
		s.setState(r, Stopping)
		s.tl.StopRequested(r.p.Name, r.cur.gen, why, now)
		r.cur.due = now.Add(r.p.Stop.Timeout)
		s.stopProbes(r, true)
		s.sendStopSignal(r) // no stop.command: the kubelet skips preStop too
	}
}

// restartAllExit handles the exit of a child stopped by a restart-all.
func (s *Supervisor) restartAllExit(r *record, code int) {
	s.setState(r, Pending)
	r.relaunch = true
	r.reason = "restarting: restart-all"
	s.log.Info("stopped for restart-all", "process", r.p.Name, "code", code)
}

// restartAllOver ends the hold on starts once no child of the old start-up
// is alive and the backoff of the process that asked is over.
func (s *Supervisor) restartAllOver(now time.Time) {
	if s.restartingAll && s.alive == 0 && !now.Before(s.restartAllAt) {
		s.restartingAll = false
		s.log.Info("restart-all: every process stopped, starting again")
	}
}

// restartAllWake is when step must look again for a restart-all: the end
// of its backoff once every child is gone (before that, their exits are
// the events that matter; a past instant then would spin the loop).
func (s *Supervisor) restartAllWake() time.Time {
	if !s.restartingAll || s.alive > 0 || s.phase == PhaseStopping {
		return time.Time{}
	}
	return s.restartAllAt
}

// ruleMatchesCopy is r's per-rule counts for a snapshot (nil when none).
func ruleMatchesCopy(r *record) map[string]int {
	if len(r.count.ruleMatches) == 0 {
		return nil
	}
	return maps.Clone(r.count.ruleMatches)
}
