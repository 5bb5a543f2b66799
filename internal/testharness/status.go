package testharness

import "time"

// ProcessStatus is one process of podvisor's /status document: every field
// any suite reads (a field podvisor leaves out stays zero).
type ProcessStatus struct {
	Name       string     `json:"name"`
	Type       string     `json:"type"`
	State      string     `json:"state"`
	Pid        int        `json:"pid"`
	Ready      bool       `json:"ready"`
	Restarts   int        `json:"restarts"`
	ExitCode   *int       `json:"exit_code"`
	Reason     string     `json:"reason"`
	Status     string     `json:"status"`
	StartedAt  *time.Time `json:"started_at"`
	ReadyAt    *time.Time `json:"ready_at"`
	WaitingFor []string   `json:"waiting_for"`
}

// Status is podvisor's /status document.
type Status struct {
	Phase     string          `json:"phase"`
	Ready     bool            `json:"ready"`
	Processes []ProcessStatus `json:"processes"`
}

// Process returns the named process, or one with only Name and State
// "absent" when there is none.
func (s Status) Process(name string) ProcessStatus {
	for _, p := range s.Processes {
		if p.Name == name {
			return p
		}
	}
	return ProcessStatus{Name: name, State: "absent"}
}
