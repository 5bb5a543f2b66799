package api

import "time"

// Timeline is the /timeline document. Instants are RFC 3339 with nanoseconds;
// the chain and report give seconds, relative to Start where they are
// instants ("_at") and plain durations otherwise.
type Timeline struct {
	Start         time.Time         `json:"start"` // podvisor's start: the chart's origin
	Now           time.Time         `json:"now"`   // when the document was made
	Processes     []TimelineProcess `json:"processes"`
	CriticalChain []ChainLink       `json:"critical_chain"`
	Shutdown      *Shutdown         `json:"shutdown"` // null until a teardown began
}

// TimelineProcess is one configured process and its last incarnations, oldest first.
type TimelineProcess struct {
	Name         string        `json:"name"`
	Type         string        `json:"type"`
	DependsOn    []Dependency  `json:"depends_on"`
	Scheduled    bool          `json:"scheduled,omitempty"` // runs at its schedule's ticks, not in the start-up
	Incarnations []Incarnation `json:"incarnations"`
	Dropped      int           `json:"dropped"` // older incarnations no longer kept
}

// Incarnation is one run of a process; an instant is null until it happened.
type Incarnation struct {
	Generation       uint64     `json:"generation"`
	Pid              int        `json:"pid"`
	Spawned          *time.Time `json:"spawned"`
	Started          *time.Time `json:"started"`
	Ready            *time.Time `json:"ready"`
	StopRequested    *time.Time `json:"stop_requested"`
	StopReason       string     `json:"stop_reason"`
	StopCommandBegan *time.Time `json:"stop_command_began"`
	StopCommandEnded *time.Time `json:"stop_command_ended"`
	StopCommandError string     `json:"stop_command_error"`
	SignalSent       *time.Time `json:"signal_sent"`
	Signal           string     `json:"signal"`
	KillSent         *time.Time `json:"sigkill_sent"`
	Exited           *time.Time `json:"exited"`
	ExitCode         *int       `json:"exit_code"`
	Success          bool       `json:"success"`     // the exit code is a success code
	ExitReason       string     `json:"exit_reason"` // "OOMKilled" when the kernel's OOM killer ended it
}

// ChainLink is one step of the critical chain, from the first process to the one
// that became ready last.
type ChainLink struct {
	Process     string  `json:"process"`
	SpawnedAt   float64 `json:"spawned_at"`    // seconds after Start
	ReadyAt     float64 `json:"ready_at"`      // seconds after Start: ready, or completed for a oneshot/job
	TimeToReady float64 `json:"time_to_ready"` // ReadyAt - SpawnedAt
	// Gates is the condition the next link waited for on this one
	// ("started", "ready", "completed"); "" on the last link.
	Gates string `json:"gates"`
}

// Shutdown is the teardown report.
type Shutdown struct {
	Cause         string         `json:"cause"`
	Process       string         `json:"process"` // the process whose failure began the teardown, if one did
	Began         time.Time      `json:"began"`
	Ended         *time.Time     `json:"ended"`          // null while processes are still stopping
	BudgetSeconds float64        `json:"budget_seconds"` // shutdown_timeout
	UsedSeconds   float64        `json:"used_seconds"`   // until Ended, or until now
	LeftSeconds   float64        `json:"left_seconds"`   // of the budget, never below 0
	Processes     []ShutdownStop `json:"processes"`      // in the order they exited
}

// ShutdownStop says how one process's stop went in the teardown.
type ShutdownStop struct {
	Process string `json:"process"`
	// RequestedAt and ExitedAt are seconds after the teardown began; ExitedAt
	// is null while it runs.
	RequestedAt *float64 `json:"requested_at"`
	ExitedAt    *float64 `json:"exited_at"`
	StopSeconds *float64 `json:"stop_seconds"` // from stop request to exit
	// EndedBy: "stop.command" (it exited before the stop signal was sent),
	// "signal" (after the stop signal), "SIGKILL", "exited" (on its own,
	// before podvisor asked), "spawn failed" (it never ran), or "running".
	EndedBy   string `json:"ended_by"`
	Signal    string `json:"signal"` // the stop signal sent, if any
	SIGKILLed bool   `json:"sigkilled"`
	ExitCode  *int   `json:"exit_code"`
	// Cause: this is the process whose failure began the teardown (it
	// may have exited just before the teardown began).
	Cause bool `json:"cause"`
}

// Dependency is one dependency edge: the process waits for Name to be
// Condition (started | ready | completed).
type Dependency struct {
	Name      string `json:"name"`
	Condition string `json:"condition"`
}
