package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// Recorder receives the life events of every incarnation, for the timeline
// (internal/timeline). The loop calls it synchronously: calls must be quick
// and must not block.
type Recorder interface {
	Spawned(name string, gen uint64, at time.Time)
	Started(name string, gen uint64, pid int, at time.Time)
	Ready(name string, gen uint64, at time.Time)
	StopRequested(name string, gen uint64, why string, at time.Time)
	StopCommand(name string, gen uint64, ended bool, err error, at time.Time)
	Signalled(name string, gen uint64, sig proc.Signal, at time.Time)
	Exited(name string, gen uint64, code int, success bool, reason string, at time.Time)
	TeardownBegan(cause string, budget time.Duration, at time.Time)
	TeardownEnded(at time.Time)
}

// OOMDetector tells whether a death by SIGKILL that podvisor did not send
// was the kernel's OOM killer (internal/oom).
type OOMDetector interface {
	Claim() bool
}

// ReasonOOMKilled is the reason of a process the OOM killer ended, as
// Kubernetes words it.
const ReasonOOMKilled = "OOMKilled"

type nopRecorder struct{}

func (nopRecorder) Spawned(string, uint64, time.Time)                   {}
func (nopRecorder) Started(string, uint64, int, time.Time)              {}
func (nopRecorder) Ready(string, uint64, time.Time)                     {}
func (nopRecorder) StopRequested(string, uint64, string, time.Time)     {}
func (nopRecorder) StopCommand(string, uint64, bool, error, time.Time)  {}
func (nopRecorder) Signalled(string, uint64, proc.Signal, time.Time)    {}
func (nopRecorder) Exited(string, uint64, int, bool, string, time.Time) {}
func (nopRecorder) TeardownBegan(string, time.Duration, time.Time)      {}
func (nopRecorder) TeardownEnded(time.Time)                             {}

// ReloadRecorder is implemented by a Recorder that learns the processes of
// a reloaded config (timeline.Recorder): called before any of them starts.
type ReloadRecorder interface {
	ReconfiguredFrom(cfg *config.Config)
}

// CauseRecorder is implemented by a Recorder that names, in its shutdown
// report, the process whose failure began the teardown.
type CauseRecorder interface {
	TeardownCause(process string)
}

func recorderOrNop(r Recorder) Recorder {
	if r == nil {
		return nopRecorder{}
	}
	return r
}

// stopWhy says why the loop is stopping r, for the timeline.
func (s *Supervisor) stopWhy(r *record, intent stopIntent) string {
	switch {
	case intent == intentCascade:
		return "a restart: true dependency is restarting"
	case intent == intentFail:
		return r.reason
	case s.phase == PhaseStopping:
		return "teardown: " + s.outcome.Detail
	}
	return "stop requested"
}

// oomKilled reports whether r's exit ex was the kernel's OOM killer: a
// SIGKILL death (or exit code 137 from a shell whose child was killed) that
// podvisor did not cause, while the memory cgroup counted a new OOM kill.
// It counts and logs the kill.
func (s *Supervisor) oomKilled(r *record, ex proc.Exit) bool {
	if s.oom == nil || r.killed || (ex.Signal() != proc.SIGKILL && ex.Code() != 128+int(proc.SIGKILL)) {
		return false
	}
	if !s.oom.Claim() {
		return false
	}
	r.oomKills++
	s.log.Warn("killed by the kernel's OOM killer", "process", r.p.Name, "pid", ex.Pid, "reason", ReasonOOMKilled, "oom_kills", r.oomKills)
	return true
}

// recordExit passes an exit to the timeline.
func (s *Supervisor) recordExit(r *record, gen uint64, code int, oom bool, rule string, at time.Time) {
	reason := rule // the exit rule that decides what follows, if any
	if oom {
		reason = ReasonOOMKilled
	}
	s.tl.Exited(r.p.Name, gen, code, r.p.IsSuccess(code), reason, at)
}
