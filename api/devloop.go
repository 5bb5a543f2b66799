package api

// ExecRequest is the body of POST /v1/exec on the control socket: run
// Command in the context of process Name (podvisor exec). TTY and Stdin
// (podvisor exec -t, -i) need the request upgraded to podvisor-exec
// frames (docs/operate.md); Rows and Cols are the terminal's first size.
type ExecRequest struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
	TTY     bool     `json:"tty,omitempty"`
	Stdin   bool     `json:"stdin,omitempty"`
	Rows    uint16   `json:"rows,omitempty"`
	Cols    uint16   `json:"cols,omitempty"`
}

// ExecFrame is one line of POST /v1/exec's answer (JSON lines): first the
// pid once the command runs, then its output as it comes (stream "stdout"
// or "stderr", data base64 in JSON), last its exit code, or an error with
// the code to exit with when it did not start.
type ExecFrame struct {
	Pid      int    `json:"pid,omitempty"`
	Stream   string `json:"stream,omitempty"`
	Data     []byte `json:"data,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
}

// DownResponse is POST /v1/down's answer (podvisor down): the run's exit
// code, why it ended, and the shutdown report.
type DownResponse struct {
	ExitCode int       `json:"exit_code"`
	Cause    string    `json:"cause"`
	Shutdown *Shutdown `json:"shutdown"`
}
