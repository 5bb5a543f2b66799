// The supervisor's vocabulary: the interfaces it drives (Child, Launcher),
// its options, the outcome of a run, and the loop-owned record of one process.

package supervisor

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/observe"
	"github.com/podvisor/podvisor/internal/proc"
)

// Child is one running incarnation of a process.
type Child interface {
	Pid() int
	// Signal sends sig to the child's process group.
	Signal(sig proc.Signal) error
	// GroupAlive reports whether the child's process group still has
	// members (after the leader's exit; teardown.go). A child that cannot
	// tell answers false.
	GroupAlive() bool
}

// Hooks lets a launched child report to the loop: its exit (the launcher
// calls Exited exactly once, after the child has been reaped) and its
// event-driven readiness (log-line matcher, notify socket or fd). The
// functions are safe to call from any goroutine and never block once the
// supervisor has returned. Exit is a call rather than a channel so that no
// goroutine per child sits between the reaper and the loop.
type Hooks struct {
	Exited func(proc.Exit)
	Ready  func(detail string)
	Status func(status string)
	// Watchdog reports WATCHDOG=1 (false) or WATCHDOG=trigger (true).
	Watchdog func(trigger bool)
	// Extend reports EXTEND_TIMEOUT_USEC; Errno reports ERRNO=.
	Extend func(d time.Duration)
	Errno  func(errno int)
	// Stopping reports STOPPING=1 (notifyext.go).
	Stopping func()
	// MainPID reports that pid is the process's main pid now (MAINPID=,
	// a pid file): the Child's Pid, exit and signals are its (notifyext.go).
	MainPID func(pid int)
	// Failed gives the reason the start failed though the exit that
	// follows may have a success code (a daemon's pid file that could not
	// be read): that exit is a failed start (notifyext.go).
	Failed func(reason string)
	// Reloading reports RELOADING=1, with when the process sent it
	// (MONOTONIC_USEC=; zero when absent) (reloadproc.go).
	Reloading func(at time.Time)
}

// Launcher starts processes. The real one is internal/launch's Launcher;
// tests use a scripted fake.
type Launcher interface {
	Launch(p *config.Process, gen uint64, h Hooks) (Child, error)
	// StopCommand runs p's stop.command and returns when it has finished or ctx
	// is done.
	StopCommand(ctx context.Context, p *config.Process) error
	// ReloadCommand runs p's reload.command, as StopCommand does.
	ReloadCommand(ctx context.Context, p *config.Process) error
	// WatchSeen arranges for seen to be called, from another goroutine and
	// not once ctx is done, when the process pid has been seen running
	// after its exec (a sidecar's start gate, sidecars.go). It returns
	// false when it cannot watch: the process counts as seen at once.
	WatchSeen(ctx context.Context, pid int, seen func()) bool
}

// CheckerFactory builds a polled check (http, tcp, exec, file) for one
// incarnation of p started at since.
type CheckerFactory func(p *config.Process, probe *config.Probe, since time.Time) (health.Checker, error)

// Options configures a Supervisor.
type Options struct {
	Config   *config.Config
	Launcher Launcher
	Checkers CheckerFactory // needed only when a polled probe is configured
	Watcher  Watcher        // needed only when a process has watch:
	Log      *slog.Logger
	OOM      OOMDetector // may be nil

	// OnEvent, if set, observes the supervisor (the timeline, the
	// metrics; observe.Fanout when more than one subscribes). The loop
	// calls it for the life of every incarnation, teardowns and reloads,
	// and each probe goroutine for its probe's attempts (observe.Probe),
	// so calls come from several goroutines at once: it must be safe for
	// that, quick, and must never block.
	OnEvent func(observe.Event)

	// Operating (commands.go, reload.go); all optional.
	Load     func() (*config.Config, error) // reads the config again, for reload and SIGHUP
	OnReload func(*config.Config)           // called by the loop after a reload applied; must not block
	Tails    *logs.Tails                    // output tails, for podvisor logs

	// Outside, if set, names the processes of a config that this run
	// does not start (profiles, a subset: config.Select), for the config
	// at New and for the processes a reload adds (subset.go).
	Outside func(*config.Config) []string

	// Pace, if its Period is set, is the kubelet's pace (pace.go): kube
	// play's default.
	Pace Pace

	// OnRunning is called by the loop once, when every process is first
	// ready (the phase turns Running); must not block.
	OnRunning func()

	// OnTeardown is called by the loop once, when the teardown begins;
	// must not block.
	OnTeardown func()

	// WallClock is the calendar time for schedules (tests jump it); nil
	// is time.Now.
	WallClock func() time.Time
}

// Outcome is the result of Run.
type Outcome struct {
	Reason  Reason
	Signal  os.Signal // for ReasonSignal
	Process string    // for ReasonFatal: the process that failed
	Code    int       // for ReasonFatal: its exit code (128+N for signal N), or -1 when it has none
	Killed  bool      // teardown had to SIGKILL something
	Detail  string    // human-readable cause
	// Deadline is when shutdown_timeout runs out (zero if Run was cancelled
	// before a teardown began). The final sweep after Run spends what is left
	// of this budget, not more.
	Deadline time.Time
}

// ExitCode maps an outcome to podvisor's exit status as docs/reference.md
// (Exit codes) defines it.
func (o Outcome) ExitCode() int {
	switch {
	case o.Reason == ReasonRule && o.Code >= 0:
		return o.Code // a shutdown rule: the process's code, 0 included
	case o.Reason == ReasonFatal && o.Code > 0:
		return o.Code
	case o.Reason == ReasonFatal, o.Reason == ReasonCancelled, o.Killed:
		return 1
	default:
		return 0
	}
}

const reminderEvery = 10 * time.Second

// reasonFollows is the reason of a process stopped because a restart: true
// dependency restarts; its start again counts as a restart.
const reasonFollows = "restarting with its dependency"

type dep struct {
	idx     int
	cond    graph.Condition
	restart bool
}

// record is the loop-owned state of one process: what outlives a spawn.
// Everything about one spawn is in its incarnation (incarnation.go). Only the
// loop goroutine reads or writes it.
type record struct {
	p           *config.Process
	idx         int
	deps        []dep
	dependents  []int // records that depend on this one
	restartDeps []int // dependents whose edge to this one has restart: true

	state State
	// cur is the latest incarnation: the running one, or the last one once
	// it ended (its child is nil then). A record that never started has a
	// zero one (gen 0); a spawn replaces it with a new value (start.go).
	cur *incarnation
	// old is the previous incarnation during a restart with overlap: it
	// serves until cur is ready (overlap.go).
	old *incarnation

	everStarted bool
	count       counters
	backoff     backoff
	exitCode    *int
	exitedAt    time.Time
	reason      string
	sched       schedule // schedule.go

	// wantStop asks for a stop outside teardown (failed start or liveness,
	// or a restart: true dependency restarting) that waits until no
	// restart: true dependent is alive: dependents stop first.
	wantStop stopIntent
	// relaunch marks a Pending record that came from backoff: its start
	// counts as a restart.
	relaunch bool
	ruleStop bool // Stopped by a stop rule (a job so stopped counts as done); setState clears it

	op operatorHold // commands.go, reload.go
}

// counters are a record's running totals, shown in /status and the metrics.
type counters struct {
	restarts       int
	followed       int // restarts that followed a restart: true dependency (not counted against restart.limit)
	oomKills       int
	watchdogMisses int            // watchdog failures (missed deadline or trigger)
	ruleMatches    map[string]int // exits decided by each restart.rules rule, by label
	watchEvents    int            // watch: changes acted on
}

// backoff is a record's restart delay: the last one, and when it ends.
type backoff struct {
	delay time.Duration
	until time.Time
}

// schedule is the state of a scheduled oneshot (schedule.go): the next tick
// (wall clock), a run due at the start rule, runs started by ticks and
// ticks skipped.
type schedule struct {
	nextRun time.Time
	runDue  bool
	runs    int
	skipped int
}

// operatorHold is the operator's hold on a record (commands.go): held by
// podvisor stop (heldBy names the process whose stop took it down), or
// removed by a reload (gone: kept only until stopped, then ignored).
type operatorHold struct {
	held   bool
	heldBy string
	gone   bool
	// outside: not in this run's set (subset.go); held too, and counted
	// for nothing until podvisor start brings it in.
	outside bool
	// after holds the processes a reload removed while this one was added
	// or restarted by it: it starts only once they are all gone (a renamed
	// process must not start while its old self holds the port).
	after []*record
}

// newRecord is the record of p at index idx, never started yet.
func newRecord(p *config.Process, idx int) *record {
	return &record{p: p, idx: idx, cur: &incarnation{}}
}
