// The sd_notify messages beyond READY=1, STATUS= and the watchdog that the
// loop acts on: EXTEND_TIMEOUT_USEC (more time for the start or stop in
// progress), ERRNO= (named in the reason of the exit that follows) and
// STOPPING=1 (the process stops on its own).

package supervisor

import (
	"fmt"
	"slices"
	"time"

	"github.com/podvisor/podvisor/internal/config"
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

// onMainPID records inc's new main pid (MAINPID=, a pid file): the
// launcher's Child now answers for it, signals included; what changes
// here is the pid /status shows and the log.
func (s *Supervisor) onMainPID(r *record, inc *incarnation, pid int) {
	if inc.pid == pid {
		return
	}
	s.log.Info("main pid", "process", r.p.Name, "pid", pid, "was", inc.pid)
	inc.pid = pid
}

// reasonSelfStop is the reason of a service that said STOPPING=1.
const reasonSelfStop = "stopping on its own (STOPPING=1)"

// onStopping is STOPPING=1 from a service: it has begun stopping on its
// own. As systemd does, it is then treated as if podvisor had sent its
// stop signal: it is Stopping (not ready), no signal is sent, its watchdog
// and checks end, and SIGKILL follows at stop.timeout. Its exit is judged
// by selfStopped. A oneshot or job ends by exiting anyway: ignored, as it
// is from a process already stopping or during teardown.
func (s *Supervisor) onStopping(r *record, inc *incarnation, now time.Time) {
	if r.p.Type != config.Service || s.phase == PhaseStopping || r.state == Stopping ||
		r.wantStop != intentNone || inc.lingering != nil {
		return
	}
	s.log.Info("stopping on its own (STOPPING=1)", "process", r.p.Name, "pid", inc.pid)
	s.setState(r, Stopping)
	inc.intent = intentSelf
	inc.watchdogDue = time.Time{}
	r.reason = reasonSelfStop
	s.tl.StopRequested(r.p.Name, inc.gen, reasonSelfStop, now)
	inc.due = s.stopDue(r, now)
	s.stopProbes(r, true)
}

// selfStopped settles the exit of a service that said STOPPING=1: an
// exit with a success code, or by its stop signal or one that systemd
// counts as a clean stop (SIGHUP, SIGINT, SIGTERM, SIGPIPE), is no crash:
// restart: always starts it again after its backoff, any other policy
// leaves it stopped. Any other exit (a failure code, the SIGKILL at the
// stop timeout) is a failure as usual: it reports false.
func (s *Supervisor) selfStopped(r *record, ex proc.Exit, ran time.Duration, now time.Time) bool {
	code := ex.Code()
	clean := r.p.IsSuccess(code) ||
		!r.cur.killed && slices.Contains([]proc.Signal{proc.SIGHUP, proc.SIGINT, proc.SIGTERM, proc.SIGPIPE, r.p.Stop.Signal}, ex.Signal())
	if !clean {
		return false
	}
	r.reason = fmt.Sprintf("stopped on its own (STOPPING=1), exit code %d", code)
	if r.p.Restart.Policy == config.Always {
		s.log.Info("stopped on its own", "process", r.p.Name, "code", code, "restart", "always")
		s.scheduleRestart(r, ran, now)
		return true
	}
	s.setState(r, Stopped)
	s.log.Info("stopped on its own", "process", r.p.Name, "code", code, "restart", r.p.Restart.Policy.String())
	return true
}
