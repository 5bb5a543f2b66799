package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/observe"
	"github.com/podvisor/podvisor/internal/proc"
)

// OOMDetector tells whether a death by SIGKILL that podvisor did not send
// was the kernel's OOM killer (internal/oom).
type OOMDetector interface {
	Claim() bool
}

// ReasonOOMKilled is the reason of a process the OOM killer ended, as
// Kubernetes words it.
const ReasonOOMKilled = "OOMKilled"

// emitter reports to Options.OnEvent (observe.Event): one method per kind
// the loop reports, so a call site reads as what happened. A nil hook
// makes every call a no-op.
type emitter struct {
	on func(observe.Event)
}

func (m emitter) emit(e observe.Event) {
	if m.on != nil {
		m.on(e)
	}
}

func (m emitter) Spawned(name string, gen uint64, at time.Time) {
	m.emit(observe.Event{Kind: observe.Spawned, Process: name, Gen: gen, At: at})
}

func (m emitter) Started(name string, gen uint64, pid int, at time.Time) {
	m.emit(observe.Event{Kind: observe.Started, Process: name, Gen: gen, Pid: pid, At: at})
}

func (m emitter) Ready(name string, gen uint64, at time.Time) {
	m.emit(observe.Event{Kind: observe.Ready, Process: name, Gen: gen, At: at})
}

func (m emitter) StopRequested(name string, gen uint64, why string, at time.Time) {
	m.emit(observe.Event{Kind: observe.StopRequested, Process: name, Gen: gen, Why: why, At: at})
}

func (m emitter) StopCommand(name string, gen uint64, ended bool, err error, at time.Time) {
	m.emit(observe.Event{Kind: observe.StopCommand, Process: name, Gen: gen, Ended: ended, Err: err, At: at})
}

func (m emitter) Signalled(name string, gen uint64, sig proc.Signal, at time.Time) {
	m.emit(observe.Event{Kind: observe.Signalled, Process: name, Gen: gen, Signal: sig, At: at})
}

func (m emitter) Exited(name string, gen uint64, code int, success bool, reason string, at time.Time) {
	m.emit(observe.Event{Kind: observe.Exited, Process: name, Gen: gen, Code: code, Success: success, Why: reason, At: at})
}

func (m emitter) TeardownBegan(cause string, budget time.Duration, at time.Time) {
	m.emit(observe.Event{Kind: observe.TeardownBegan, Why: cause, Budget: budget, At: at})
}

func (m emitter) TeardownCause(process string) {
	m.emit(observe.Event{Kind: observe.TeardownCause, Process: process})
}

func (m emitter) TeardownEnded(at time.Time) {
	m.emit(observe.Event{Kind: observe.TeardownEnded, At: at})
}

func (m emitter) ReconfiguredFrom(cfg *config.Config) {
	m.emit(observe.Event{Kind: observe.Reconfigured, Config: cfg})
}

func (m emitter) Reload(result string) {
	m.emit(observe.Event{Kind: observe.Reload, Why: result})
}

// ProbeObserved is called by probe goroutines, not the loop.
func (m emitter) ProbeObserved(process, probe string, d time.Duration, ok bool) {
	m.emit(observe.Event{Kind: observe.Probe, Process: process, Probe: probe, Took: d, OK: ok})
}

// stopWhy says why the loop is stopping r, for the timeline.
func (s *Supervisor) stopWhy(r *record, intent stopIntent) string {
	switch {
	case intent == intentCascade:
		return "a restart: true dependency is restarting"
	case intent == intentFail:
		return r.reason
	case intent == intentSelf:
		return reasonSelfStop
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
	if r.cur.killed || (ex.Signal() != proc.SIGKILL && ex.Code() != 128+int(proc.SIGKILL)) {
		return false
	}
	switch {
	case ex.OOMKilled: // its own cgroup said so (docs/resources.md)
		if s.oom != nil {
			s.oom.Claim() // on v2 podvisor's cgroup counted it too
		}
	case s.oom == nil || !s.oom.Claim():
		return false
	}
	r.count.oomKills++
	s.log.Warn("killed by the kernel's OOM killer", "process", r.p.Name, "pid", ex.Pid, "reason", ReasonOOMKilled, "oom_kills", r.count.oomKills)
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
