// Signals to podvisor itself: the first TERM/INT starts the teardown, a second
// one kills everything, the same signal delivered twice is one.

package supervisor

import (
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// dupSignalWindow: the same signal arriving again within this is one
// delivery seen twice (coreutils timeout signals both the pid and its
// group), not a second signal.
const dupSignalWindow = 10 * time.Millisecond

type stampedSignal struct {
	sig os.Signal
	at  time.Time
}

func (s *Supervisor) onSignal(sig os.Signal, now time.Time) {
	ss, _ := sig.(proc.Signal)
	switch ss {
	case proc.SIGTERM, proc.SIGINT, proc.SIGQUIT:
		dup := sig == s.lastSig && now.Sub(s.lastSigAt) < dupSignalWindow
		s.lastSig, s.lastSigAt = sig, now
		if s.phase == PhaseStopping {
			switch {
			case dup:
				s.log.Debug("same signal twice within "+dupSignalWindow.String()+": one delivery", "signal", sig.String())
			case ss == proc.SIGQUIT:
				s.armed = true
				s.log.Info("signal received during teardown, teardown continues", "signal", sig.String())
			case !s.armed:
				// The teardown began by itself (jobs done, a fatal failure):
				// this is the orchestrator's first word, not its second.
				s.armed = true
				s.log.Info("signal received during teardown: teardown continues; a second signal kills everything", "signal", sig.String())
			default:
				s.log.Warn("second signal: killing everything now", "signal", sig.String())
				s.killAll("second " + sig.String())
			}
			return
		}
		s.armed = true
		s.teardown(Outcome{Reason: ReasonSignal, Signal: sig, Detail: "received " + sig.String()}, now)
	case proc.SIGUSR1, proc.SIGUSR2:
		for _, r := range s.recs {
			if r.cur.child != nil {
				if err := r.cur.child.Signal(ss); err != nil {
					s.log.Warn("forward signal", "process", r.p.Name, "signal", sig.String(), "err", err)
				}
			}
		}
	case proc.SIGHUP:
		s.onHangup()
	default:
		s.log.Debug("signal ignored", "signal", sig.String())
	}
}
