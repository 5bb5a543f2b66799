package supervisor

// State is the lifecycle state of one process.
type State uint8

const (
	Pending   State = iota // waiting on dependencies
	Starting               // spawned, not yet ready
	Running                // ready (or started, without a readiness check)
	Backoff                // waiting to restart
	Stopping               // stop requested, child still alive
	Stopped                // not running and not going to run again on its own
	Completed              // oneshot/job exited with a success code
	Failed                 // gave up: spawn error, restart limit, failed oneshot/job
)

// stateNames uses SPEC's words; indexed by State so a new constant without a
// name shows up as "" in TestStateNames rather than as a wrong word.
var stateNames = [...]string{
	Pending:   "pending",
	Starting:  "starting",
	Running:   "running",
	Backoff:   "backoff",
	Stopping:  "stopping",
	Stopped:   "stopped",
	Completed: "completed",
	Failed:    "failed",
}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Phase is the supervisor-wide phase.
type Phase uint8

const (
	PhaseStarting Phase = iota // not every process is ready yet
	PhaseRunning               // everything that should be ready is
	PhaseStopping              // teardown in progress
)

var phaseNames = [...]string{PhaseStarting: "starting", PhaseRunning: "running", PhaseStopping: "stopping"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "unknown"
}
