// Package observe is the supervisor's one observation hook: the supervisor
// (internal/supervisor) reports what it does as Events to one function,
// Options.OnEvent, and the timeline (internal/timeline), the metrics
// (internal/server) and whatever else watches subscribe to it through
// Fanout. It is a package of its own so that those subscribers need not
// import the supervisor (docs/architecture.md).
package observe

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// Kind says what an Event reports.
type Kind uint8

const (
	Spawned       Kind = iota // Process, Gen: a launch began
	Started                   // Process, Gen, Pid: the launch succeeded
	Ready                     // Process, Gen
	StopRequested             // Process, Gen, Why
	StopCommand               // Process, Gen, Ended (false: began), Err
	Signalled                 // Process, Gen, Signal
	Exited                    // Process, Gen, Code, Success, Why (the reason: a rule, OOMKilled)
	TeardownBegan             // Why (the cause), Budget
	TeardownCause             // Process: whose failure began the teardown
	TeardownEnded             //
	Reconfigured              // Config: a reload applied it; before any of its processes starts
	Reload                    // Why: a reload attempt's result: "applied", "invalid" or "refused"
	Probe                     // Process, Probe, Took, OK: one probe attempt
)

// Event is one observation. Only the fields its Kind names are set.
type Event struct {
	Kind    Kind
	At      time.Time // zero for Reload, Probe, TeardownCause and Reconfigured
	Process string
	Gen     uint64 // the incarnation
	Pid     int
	Why     string
	Ended   bool
	Err     error
	Signal  proc.Signal
	Code    int
	Success bool
	Budget  time.Duration
	Config  *config.Config
	Probe   string // "ready", "live", "startup"
	Took    time.Duration
	OK      bool
}

// Fanout returns one hook that calls each of fs (nil ones left out) in
// order, or nil when there are none.
func Fanout(fs ...func(Event)) func(Event) {
	var on []func(Event)
	for _, f := range fs {
		if f != nil {
			on = append(on, f)
		}
	}
	switch len(on) {
	case 0:
		return nil
	case 1:
		return on[0]
	}
	return func(e Event) {
		for _, f := range on {
			f(e)
		}
	}
}
