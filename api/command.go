package api

// The reply headers naming the podvisor that answered on the control
// socket: its pid and its config file.
const (
	HeaderPid    = "Podvisor-Pid"
	HeaderConfig = "Podvisor-Config"
)

// CommandRequest is an operate command's body (POST /v1/OP).
type CommandRequest struct {
	Names  []string `json:"names,omitempty"`
	Signal string   `json:"signal,omitempty"`
	DryRun bool     `json:"dry_run,omitempty"`
}

// CommandResult is the outcome for one process.
type CommandResult struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"` // what happened, or why not: "restarted (pid 12 -> 15)"
}

// CommandResponse is a command's answer.
type CommandResponse struct {
	OK bool `json:"ok"`
	// Error refuses the whole request: unknown process (with a "did you
	// mean"), teardown in progress, invalid config (then Errors has every
	// problem, one per entry, with its position).
	Error   string          `json:"error,omitempty"`
	Errors  []string        `json:"errors,omitempty"`
	Results []CommandResult `json:"results,omitempty"`
	// Reload: the plan, one action per line, and the config generation
	// now in effect (unchanged by a dry run or a refusal).
	Plan       []string `json:"plan,omitempty"`
	Generation uint64   `json:"generation,omitempty"`
	// By is who answered: filled in by the client from the reply's
	// headers, not sent in the body.
	By Identity `json:"-"`
}

// Identity is which podvisor answers on a socket (GET /v1/identity).
type Identity struct {
	Pid    int    `json:"pid"`
	Config string `json:"config"`
}
