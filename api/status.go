package api

import "time"

// Status is the /status document (and the first frame of every event
// stream). It deliberately has no room for command lines or environment
// values.
type Status struct {
	Phase     string          `json:"phase"`
	Ready     bool            `json:"ready"`
	Processes []ProcessStatus `json:"processes"`
	// Generation is the config generation in effect: 1 for the config
	// podvisor started with, one more after each applied reload.
	Generation uint64 `json:"generation"`
	// Pod is present when the processes are a pod's (kube play): its
	// phase and conditions as the kubelet would report them.
	Pod *PodStatus `json:"pod,omitempty"`
}

// ProcessStatus is one process in Status.
type ProcessStatus struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Terminal is "tty" or "stdin" for a process `podvisor attach` reaches.
	Terminal string `json:"terminal,omitempty"`
	State    string `json:"state"`
	Pid      int    `json:"pid"` // 0 when not running
	Ready    bool   `json:"ready"`
	Restarts int    `json:"restarts"`
	// ExitCode is the last exit code (128+N for signal N), null if the
	// process never exited.
	ExitCode *int `json:"exit_code"`
	// StartedAt and ReadyAt are RFC 3339 with nanoseconds, null when unset.
	StartedAt  *time.Time `json:"started_at"`
	ReadyAt    *time.Time `json:"ready_at"`
	WaitingFor []string   `json:"waiting_for"` // never null
	Status     string     `json:"status"`      // last STATUS= notification
	Reason     string     `json:"reason"`      // why failed/backoff/stopped; "OOMKilled" after an OOM kill
	// OOMKills counts exits caused by the kernel's OOM killer.
	OOMKills int `json:"oom_kills"`
	// Resources is what the process's tree uses, null when it does not run.
	Resources *Resources `json:"resources"`
	// StoredFDs counts the fds the process keeps in podvisor's fd store
	// (FDSTORE=1, given back to its next incarnation).
	StoredFDs int `json:"stored_fds"`
	// ResourcesNotEnforced says which of the process's resources: limits
	// are not enforced and why (docs/resources.md); "" when all are.
	ResourcesNotEnforced string `json:"resources_not_enforced,omitempty"`
	// Schedule is present for a process with schedule:.
	Schedule *ScheduleStatus `json:"schedule,omitempty"`
}

// ScheduleStatus is a scheduled process's next tick and its counts.
type ScheduleStatus struct {
	NextRun time.Time `json:"next_run"`
	Runs    int       `json:"runs"`    // runs started by ticks
	Skipped int       `json:"skipped"` // ticks skipped while a run was still going
}

// Resources is what a running process's tree uses.
type Resources struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MemoryBytes uint64  `json:"memory_bytes"` // resident set size, summed
	OpenFDs     int     `json:"open_fds"`
	Threads     int     `json:"threads"`
	Processes   int     `json:"processes"` // members of the tree counted
}

// ProcessEvent is the data of an event stream's process frame.
type ProcessEvent struct {
	Change  []string      `json:"change"`
	Was     string        `json:"was,omitempty"` // the state before, when it changed
	Process ProcessStatus `json:"process"`
}

// PhaseEvent is the data of a phase frame.
type PhaseEvent struct {
	Phase      string `json:"phase"`
	Ready      bool   `json:"ready"`
	Generation uint64 `json:"generation"`
}

// ReloadEvent is the data of a reload frame.
type ReloadEvent struct {
	Generation uint64 `json:"generation"` // the config generation now in effect
}

// PodStatus is the pod part of /status.
type PodStatus struct {
	Phase      string         `json:"phase"` // Pending, Running, Succeeded or Failed
	Ready      int            `json:"ready"` // regular containers and sidecars ready
	Total      int            `json:"total"` // regular containers and sidecars
	Conditions []PodCondition `json:"conditions"`
}

// PodCondition is one of the kubelet's pod conditions.
type PodCondition struct {
	Type   string `json:"type"`   // PodReadyToStartContainers, Initialized, ContainersReady, Ready
	Status string `json:"status"` // True or False
	// LastTransitionTime is when the condition's status last changed
	// (kept while the status stays the same, as the kubelet keeps it).
	LastTransitionTime time.Time `json:"last_transition_time"`
}
