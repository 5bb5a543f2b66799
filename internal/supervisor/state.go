// Every state and enum of the supervisor: a process's State and its
// transition table, the Phase, why Run returned (Reason), why a process is
// stopped (stopIntent), what a waiter waits for (goal) and what a reload
// does (PlanAction).

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

// stateNames uses docs/reference.md's words; indexed by State so a new constant without a
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

// Reason says why Run returned.
type Reason uint8

const (
	ReasonSignal    Reason = iota // SIGTERM, SIGINT or SIGQUIT
	ReasonJobsDone                // every job completed successfully
	ReasonFatal                   // a process failed fatally (or a job failed)
	ReasonCancelled               // the caller cancelled ctx
	// ReasonRule: a restart.rules shutdown ended the run; Outcome.Code is
	// the exit code of the process whose exit matched, and podvisor's own
	// (rules.go).
	ReasonRule
)

// ShownReloading is the state /status shows for a Running process whose
// reload: action (or RELOADING=1) is in progress: not a State of its own,
// since it stays ready and serving.
const ShownReloading = "reloading"

// stopIntent records why a process is being stopped (incarnation.intent),
// or asks for a stop that waits for its dependents (record.wantStop).
type stopIntent uint8

const (
	intentNone    stopIntent = iota
	intentFail               // start_timeout or liveness: counts as a failed start
	intentCascade            // a dependency with restart: true is restarting
	intentHold               // podvisor stop: stays stopped until start (operate.go)
	intentRestart            // podvisor restart or a reload: starts again at once
	// intentRestartTree is a watch's cascade restart: the process stops
	// only after its dependents (restarting too) have, and starts before
	// them (filewatch.go).
	intentRestartTree
	intentRemove // removed by a reload
	// intentRestartAll marks a child stopped by a restart-all (rules.go):
	// its exit makes it pending, and it starts again with everything else.
	intentRestartAll
	// intentSelf: the process said STOPPING=1 and stops on its own
	// (notifyext.go): no signal, the stop timeout, a clean exit is no crash.
	intentSelf
)

// goal is what a waiter waits for on one process (waiters.go).
type goal uint8

const (
	goalStopped goal = iota // no child left
	goalUp                  // a newer incarnation is running (ready) or has completed
)

// PlanAction is what a reload does to one process.
type PlanAction uint8

const (
	PlanStop    PlanAction = iota // removed from the config: stopped (if running) and dropped
	PlanRestart                   // spawn or probe spec changed, or a restart: true dependency restarts
	PlanStart                     // added: started once its dependencies hold
	PlanUpdate                    // only settings applied in place changed (or it is not running): no restart
)

var planActionNames = [...]string{PlanStop: "stop", PlanRestart: "restart", PlanStart: "start", PlanUpdate: "update"}

func (a PlanAction) String() string {
	if int(a) < len(planActionNames) {
		return planActionNames[a]
	}
	return "unknown"
}

// The state transitions of one process, every one the loop makes and where.
// setState is the only writer of record.state; the invariant test and the
// loop tests fail on a move that is not in this table, so the table (and the
// same table in docs/architecture.md) stays the whole truth.
//
//	from       to         when (file)
//	Pending    Starting   spawned, with a readiness check (start.go)
//	Pending    Running    spawned, without one; a oneshot or job (start.go)
//	Pending    Backoff    spawn failed for want of pids, fds or memory (exits.go)
//	Pending    Failed     spawn failed for good: not found, not executable (teardown.go: fatal)
//	Pending    Stopped    teardown before it started; podvisor stop; removed by a reload (teardown.go, operate.go, reload.go)
//	Starting   Running    ready (readiness.go)
//	Starting   Stopping   start_timeout, liveness, cascade, operator stop, teardown, min_grace past shutdown_timeout, STOPPING=1 (stops.go, teardown.go, sidecars.go, notifyext.go)
//	Running    Stopping   the same causes (stops.go, teardown.go, sidecars.go)
//	Starting,
//	Running    Completed  a oneshot or job exited with a success code (exits.go)
//	Starting,
//	Running    Stopped    exited by itself with restart: never/on-failure, or during teardown (exits.go)
//	Starting,
//	Running    Backoff    exited or failed, restart policy says again (exits.go)
//	Starting,
//	Running    Pending    exited while a restart: true dependency restarts (exits.go); Running only: a restart with overlap keeps the old incarnation aside (overlap.go)
//	Starting,
//	Running    Failed     failed and restart says no more: fatal (teardown.go)
//	Stopping   Stopped    the stop is over: teardown, operator stop, reload removal (exits.go, operate.go)
//	Stopping   Completed  a oneshot or job that exited with success during teardown (exits.go)
//	Stopping   Pending    stopped for a restart: cascade or podvisor restart (exits.go, operate.go)
//	Stopping   Backoff    stopped after a failed start or liveness check (exits.go)
//	Stopping   Failed     the same, and restart says no more (teardown.go)
//	Backoff    Starting,
//	           Running    the backoff ended and its dependencies hold: spawned again (start.go)
//	Backoff    Failed     that spawn failed for good (teardown.go: fatal)
//	Backoff    Pending    the backoff ended, its dependencies do not hold; a restart: true dependency restarts; podvisor start or restart (step.go, stops.go, operate.go)
//	Backoff    Stopped    teardown; podvisor stop; removed by a reload (teardown.go, operate.go, reload.go)
//	Stopped    Pending    podvisor start or restart; a restart: true dependency restarts; a reload restores it (operate.go, stops.go, reload.go)
//	Completed  Pending    podvisor restart or start; a reload turns it into a service (operate.go, reload.go)
//	Failed     Pending    podvisor start or restart (operate.go)
//	Completed,
//	Failed     Stopped    podvisor stop holds it down (operate.go)
var transitions = map[State][]State{
	Pending:   {Starting, Running, Backoff, Failed, Stopped},
	Starting:  {Running, Stopping, Completed, Stopped, Backoff, Pending, Failed},
	Running:   {Stopping, Completed, Stopped, Backoff, Pending, Failed},
	Stopping:  {Stopped, Completed, Pending, Backoff, Failed},
	Backoff:   {Pending, Starting, Running, Failed, Stopped},
	Stopped:   {Pending},
	Completed: {Pending, Stopped},
	Failed:    {Pending, Stopped},
}

// allowed reports whether the table has the move from -> to (staying put
// is always allowed).
func allowed(from, to State) bool {
	if from == to {
		return true
	}
	for _, t := range transitions[from] {
		if t == to {
			return true
		}
	}
	return false
}

// setState moves r to state to. onTransition (tests only) sees every move.
func (s *Supervisor) setState(r *record, to State) {
	if s.onTransition != nil {
		s.onTransition(r.p.Name, r.state, to)
	}
	if to != r.state {
		r.ruleStop = false // only applyRule's own move to Stopped sets it
	}
	r.state = to
}
