// The sd_notify watchdog (`watchdog:` on a process with ready: {notify:
// systemd}): the child gets WATCHDOG_USEC and must send WATCHDOG=1 within
// each interval, counted from its spawn and then from each ping. A missed
// deadline, or WATCHDOG=trigger, is a liveness failure with its own reason:
// the process is stopped and the restart policy decides, as for a failed
// live check.

package supervisor

import (
	"time"
)

// ReasonWatchdog prefixes the reason of a process stopped by its watchdog.
const ReasonWatchdog = "watchdog"

func (s *Supervisor) onWatchdog(r *record, inc *incarnation, e watchdogEv, now time.Time) {
	if inc.watchdogDue.IsZero() || r.wantStop != intentNone || s.phase == PhaseStopping || r.state == Stopping {
		return
	}
	if e.trigger {
		s.watchdogFail(r, "WATCHDOG=trigger", now)
		return
	}
	inc.watchdogDue = e.at.Add(r.p.Watchdog)
}

// watchdogMissed fails r if its watchdog deadline has passed; it reports
// whether it did.
func (s *Supervisor) watchdogMissed(r *record, now time.Time) bool {
	if !reached(s.watchdogWake(r), now) {
		return false
	}
	s.watchdogFail(r, "no WATCHDOG=1 within "+r.p.Watchdog.String(), now)
	return true
}

func (s *Supervisor) watchdogFail(r *record, why string, now time.Time) {
	r.cur.watchdogDue = time.Time{} // one failure per incarnation
	r.count.watchdogMisses++
	s.log.Warn("watchdog: restarting", "process", r.p.Name, "reason", why)
	r.reason = ReasonWatchdog + ": " + why
	s.requestStop(r, intentFail, now)
}

// watchdogWake is when step must look at r's watchdog (zero: never).
func (s *Supervisor) watchdogWake(r *record) time.Time {
	if s.phase == PhaseStopping || r.wantStop != intentNone {
		return time.Time{}
	}
	return r.cur.watchdogDue
}
