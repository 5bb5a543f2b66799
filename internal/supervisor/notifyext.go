// The sd_notify messages beyond READY=1, STATUS= and the watchdog that the
// loop acts on: EXTEND_TIMEOUT_USEC (more time for the start or stop in
// progress) and ERRNO= (named in the reason of the exit that follows).

package supervisor

import (
	"fmt"

	"github.com/podvisor/podvisor/internal/proc"
)

// onExtend moves the deadline in force to at least e.at+e.by, as systemd
// does: a start_timeout while starting, the stop timeout (SIGKILL) while
// stopping, never past the teardown's shutdown_timeout. Without a deadline
// in force it does nothing.
func (s *Supervisor) onExtend(r *record, inc *incarnation, e extendEv) {
	until := e.at.Add(e.by)
	switch {
	case startTimeoutRuns(r):
	case r.state == Stopping && !inc.killed:
		if s.phase == PhaseStopping && until.After(s.deadline) {
			until = s.deadline
		}
	default:
		return
	}
	if until.After(inc.due) {
		s.log.Info("deadline extended (EXTEND_TIMEOUT_USEC)", "process", r.p.Name, "state", r.state.String(), "by", e.by.String())
		inc.due = until
	}
}

// errnoText is the reason's suffix for an ERRNO= value: " (ERRNO=2: no
// such file or directory)".
func errnoText(n int) string {
	return fmt.Sprintf(" (ERRNO=%d: %s)", n, proc.ErrnoText(n))
}
