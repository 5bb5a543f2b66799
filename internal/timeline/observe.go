package timeline

import "github.com/podvisor/podvisor/internal/observe"

// OnEvent records what the supervisor reports (its Options.OnEvent). The
// supervisor's loop calls it; the probe attempts it also reports (from
// probe goroutines) are not the timeline's.
func (r *Recorder) OnEvent(e observe.Event) {
	switch e.Kind {
	case observe.Spawned:
		r.Spawned(e.Process, e.Gen, e.At)
	case observe.Started:
		r.Started(e.Process, e.Gen, e.Pid, e.At)
	case observe.Ready:
		r.Ready(e.Process, e.Gen, e.At)
	case observe.StopRequested:
		r.StopRequested(e.Process, e.Gen, e.Why, e.At)
	case observe.StopCommand:
		r.StopCommand(e.Process, e.Gen, e.Ended, e.Err, e.At)
	case observe.Signalled:
		r.Signalled(e.Process, e.Gen, e.Signal, e.At)
	case observe.Exited:
		r.Exited(e.Process, e.Gen, e.Code, e.Success, e.Why, e.At)
	case observe.TeardownBegan:
		r.TeardownBegan(e.Why, e.Budget, e.At)
	case observe.TeardownCause:
		r.TeardownCause(e.Process)
	case observe.TeardownEnded:
		r.TeardownEnded(e.At)
	case observe.Reconfigured:
		r.ReconfiguredFrom(e.Config)
	}
}
