package supervisor

import "time"

// Snapshot is an immutable picture of the supervisor, published by the loop after
// every change and read by the HTTP layer without locks. Nothing in it is ever
// modified after publication. It holds no command lines and no environment values.
type Snapshot struct {
	Phase     string // "starting", "running" or "stopping"
	Ready     bool   // what /readyz answers
	NotReady  []string
	Processes []ProcessSnapshot // sorted by name
	// Generation is the config generation: 1 at start, +1 per applied reload.
	Generation uint64
}

// ProcessSnapshot is one process in a Snapshot.
type ProcessSnapshot struct {
	Name       string
	Type       string // service | oneshot | job
	Terminal   string // "tty", "stdin" or "": what `podvisor attach` reaches
	State      string // pending | starting | running | backoff | stopping | stopped | completed | failed
	Pid        int    // 0 when not running
	Up         bool   // a child is alive
	Ready      bool
	Restarts   int
	ExitCode   *int // last exit code (128+N for signal N); nil if it never exited
	StartedAt  time.Time
	ReadyAt    time.Time
	ExitedAt   time.Time // when the last exit was reaped
	WaitingFor []string  // unmet conditions of a pending process: "db: ready"
	Status     string    // last STATUS= from notify, if any
	Reason     string    // why it is failed/backoff/stopped, if known
	OOMKills   int       // exits caused by the kernel's OOM killer
	// RuleMatches counts the exits each restart.rules rule decided, by
	// its label ("rule 1 (shutdown)"); nil when none did.
	RuleMatches map[string]int
	// WatchdogFailures counts missed WATCHDOG=1 deadlines and
	// WATCHDOG=trigger messages.
	WatchdogFailures int
	// Schedules: the next tick (zero without a schedule), runs started by
	// ticks, ticks skipped while a run was still going.
	NextRun       time.Time
	ScheduledRuns int
	SkippedRuns   int
	// WatchEvents counts the file changes (after debounce) acted on.
	WatchEvents int

	// StartDuration is spawn to ready of the last start (0 until ready).
	StartDuration time.Duration
}
