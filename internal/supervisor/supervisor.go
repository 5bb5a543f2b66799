package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/proc"
)

// Child is one running incarnation of a process.
type Child interface {
	Pid() int
	// Signal sends sig to the child's process group.
	Signal(sig syscall.Signal) error
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
}

// Launcher starts processes. The real one wraps internal/proc and internal/logs;
// tests use a scripted fake.
type Launcher interface {
	Launch(p *config.Process, gen uint64, h Hooks) (Child, error)
	// StopCommand runs p's stop.command and returns when it has finished or ctx
	// is done.
	StopCommand(ctx context.Context, p *config.Process) error
}

// CheckerFactory builds a polled check (http, tcp, exec, file) for one
// incarnation of p started at since.
type CheckerFactory func(p *config.Process, probe *config.Probe, since time.Time) (health.Checker, error)

// Options configures a Supervisor.
type Options struct {
	Config   *config.Config
	Launcher Launcher
	Checkers CheckerFactory // needed only when a polled probe is configured
	Log      *slog.Logger
	Observer Observer    // may be nil
	Timeline Recorder    // may be nil
	OOM      OOMDetector // may be nil

	// Operating (commands.go, reload.go); all optional.
	Load     func() (*config.Config, error) // reads the config again, for reload and SIGHUP
	OnReload func(*config.Config)           // called by the loop after a reload applied; must not block
	Tails    *logs.Tails                    // output tails, for podvisor logs
}

// Reason says why Run returned.
type Reason uint8

const (
	ReasonSignal    Reason = iota // SIGTERM, SIGINT or SIGQUIT
	ReasonJobsDone                // every job completed successfully
	ReasonFatal                   // a process failed fatally (or a job failed)
	ReasonCancelled               // the caller cancelled ctx
)

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

// ExitCode maps an outcome to podvisor's exit status as SPEC.md defines it.
func (o Outcome) ExitCode() int {
	switch {
	case o.Reason == ReasonFatal && o.Code > 0:
		return o.Code
	case o.Reason == ReasonFatal, o.Reason == ReasonCancelled, o.Killed:
		return 1
	default:
		return 0
	}
}

// stopIntent records why a process outside teardown is being stopped.
type stopIntent uint8

const (
	intentNone    stopIntent = iota
	intentFail               // start_timeout or liveness: counts as a failed start
	intentCascade            // a dependency with restart: true is restarting
)

const reminderEvery = 10 * time.Second

// reasonFollows is the reason of a process stopped because a restart: true
// dependency restarts; its start again counts as a restart.
const reasonFollows = "restarting with its dependency"

type dep struct {
	idx     int
	cond    graph.Condition
	restart bool
}

// record is the loop-owned state of one process. Only the loop goroutine reads
// or writes it.
type record struct {
	p           *config.Process
	idx         int
	deps        []dep
	dependents  []int // records that depend on this one
	restartDeps []int // dependents whose edge to this one has restart: true

	state       State
	gen         uint64
	child       Child
	pid         int
	everStarted bool
	ready       bool
	restarts    int
	followed    int           // restarts that followed a restart: true dependency (not counted against restart.limit)
	delay       time.Duration // last backoff delay
	due         time.Time     // backoff end, start timeout, or stop escalation
	remindAt    time.Time
	startedAt   time.Time
	readyAt     time.Time
	exitCode    *int
	exitedAt    time.Time
	reason      string
	status      string
	readyDetail string

	intent      stopIntent
	stopCmd     bool // stop.command in flight
	killed      bool // SIGKILL sent to this incarnation
	killedAt    time.Time
	oomKills    int
	cancelProbe context.CancelFunc
	cancelHook  context.CancelFunc // cancels the stop.command in flight

	// wantStop asks for a stop outside teardown (failed start or liveness,
	// or a restart: true dependency restarting) that waits until no
	// restart: true dependent is alive: dependents stop first.
	wantStop stopIntent
	// relaunch marks a Pending record that came from backoff: its start
	// counts as a restart.
	relaunch bool

	// Operator state (commands.go): held by podvisor stop (heldBy names the
	// process whose stop took it down), or removed by a reload (gone: kept
	// only until stopped, then ignored).
	held   bool
	heldBy string
	gone   bool
	// after holds the processes a reload removed while this one was added
	// or restarted by it: it starts only once they are all gone (a renamed
	// process must not start while its old self holds the port).
	after []*record

	// lingering holds the exit of a stopped leader whose process group still
	// has members: the stop is over only once the group is empty (FAULTS B4),
	// checked at pollAt since the kernel sends no event for it.
	lingering *proc.Exit
	pollAt    time.Time
}

// Supervisor runs the processes of one config.
type Supervisor struct {
	cfg      *config.Config
	launcher Launcher
	checkers CheckerFactory
	log      *slog.Logger
	obs      Observer
	tl       Recorder
	oom      OOMDetector

	inbox chan event
	pings chan chan struct{}
	// reading is held from the read of a config for a reload (podvisor
	// reload or SIGHUP) until it is in the inbox, so reloads are applied
	// in the order their files were read.
	reading chan struct{}
	done    chan struct{} // closed when Run returns: senders stop blocking
	snap    atomic.Pointer[Snapshot]
	// changed wakes event-stream readers after each publish (watch.go).
	changed changes

	// Loop-owned state.
	recs       []*record // in start order (topological, by level then name)
	byName     map[string]*record
	phase      Phase
	alive      int
	stopCmds   int
	deadline   time.Time // shutdown_timeout deadline once stopping
	outcome    Outcome
	haveResult bool
	probeCtx   context.Context
	cancelAll  context.CancelFunc
	cancelled  bool // Run's ctx is done: nothing waits for groups any more

	// armed is set once a signal started or joined the teardown: only then
	// does a further SIGTERM/SIGINT kill everything. A teardown begun by job
	// completion or a fatal failure is not armed by itself.
	armed     bool
	lastSig   os.Signal
	lastSigAt time.Time
	// abandoned is set when children outlived SIGKILL by finalGrace.
	abandoned bool
	// killingAll is set once everything got SIGKILL (second signal, cancel).
	killingAll bool

	// afterStep, if set (tests only), is called by the loop after every
	// step, with the loop's state quiescent.
	afterStep func(now time.Time)

	ops operator // operator commands and reloads (commands.go)
	// moreStarts: the last step launched a full wave (maxWave) and left
	// further startable records for the next step, so that the loop answers
	// pings and signals between waves (perf: /livez while 5,000 start).
	moreStarts bool
	// sorted is recs by name, for publish (perf: no sort per snapshot).
	sorted      []*record
	publishedAt time.Time // last publish by Run's loop
}

// New builds a supervisor. It does not start anything.
func New(o Options) (*Supervisor, error) {
	if o.Config == nil || o.Launcher == nil {
		return nil, errors.New("supervisor: config and launcher are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Supervisor{
		cfg:      o.Config,
		launcher: o.Launcher,
		checkers: o.Checkers,
		log:      o.Log,
		obs:      o.Observer,
		tl:       recorderOrNop(o.Timeline),
		oom:      o.OOM,
		inbox:    make(chan event, 256),
		pings:    make(chan chan struct{}),
		reading:  make(chan struct{}, 1),
		done:     make(chan struct{}),
		byName:   make(map[string]*record, len(o.Config.Processes)),
		ops:      operator{generation: 1, load: o.Load, onReload: o.OnReload, tails: o.Tails},
	}
	for _, level := range o.Config.Graph.Levels() {
		for _, name := range level {
			p := o.Config.Processes[name]
			r := &record{p: p, idx: len(s.recs)}
			s.recs = append(s.recs, r)
			s.byName[name] = r
		}
	}
	for _, r := range s.recs {
		for _, d := range r.p.DependsOn {
			dr := s.byName[d.Name]
			r.deps = append(r.deps, dep{idx: dr.idx, cond: d.Condition, restart: d.Restart})
			dr.dependents = append(dr.dependents, r.idx)
			if d.Restart {
				dr.restartDeps = append(dr.restartDeps, r.idx)
			}
		}
	}
	s.publish()
	return s, nil
}

// Snapshot returns the latest published state. It never blocks the loop.
func (s *Supervisor) Snapshot() Snapshot { return *s.snap.Load() }

// Ping returns once the loop has answered, or ctx's error.
func (s *Supervisor) Ping(ctx context.Context) error {
	reply := make(chan struct{})
	select {
	case s.pings <- reply:
	case <-s.done:
		return errors.New("supervisor has stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send delivers ev to the loop unless the loop has returned.
func (s *Supervisor) send(ev event) {
	select {
	case s.inbox <- ev:
	case <-s.done:
	}
}

// Run supervises until teardown completes or ctx is cancelled. Signals are
// read from the channel (so tests can inject them): SIGTERM, SIGINT and SIGQUIT
// start the teardown, a second SIGTERM or SIGINT during teardown kills
// everything at once, SIGUSR1/SIGUSR2 are forwarded to every running process
// group, SIGHUP is logged and ignored. Cancelling ctx kills everything and
// returns once the children are reaped.
func (s *Supervisor) Run(ctx context.Context, signals <-chan os.Signal) Outcome {
	defer close(s.done)
	s.probeCtx, s.cancelAll = context.WithCancel(context.Background())
	defer s.cancelAll()

	// Signals are stamped on arrival, before the loop gets to them, so a
	// duplicate delivery is told from a second signal by when it came,
	// not by how busy the loop was.
	stamped := make(chan stampedSignal)
	go func() {
		for {
			select {
			case sig, ok := <-signals:
				if !ok {
					return
				}
				select {
				case stamped <- stampedSignal{sig, time.Now()}:
				case <-s.done:
					return
				}
			case <-s.done:
				return
			}
		}
	}()

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.step(now)
		s.settleWaiters()
		if s.afterStep != nil {
			s.afterStep(now)
		}
		if s.phase == PhaseStopping && (s.alive == 0 && s.stopCmds == 0 || s.abandoned) {
			s.publish()
			s.tl.TeardownEnded(time.Now())
			return s.outcome
		}
		// perf: a snapshot is O(processes). Between waves of a big start
		// one at most every publishEvery; otherwise at most every
		// publishMin, so 200 exits trickling in one after another (a
		// fan-in teardown) cost a few snapshots, not 200. A deferred one
		// is made when the loop wakes for it.
		publishDue := time.Time{}
		if len(s.inbox) == 0 {
			gap := publishMin
			if s.moreStarts {
				gap = publishEvery
			}
			if now.Sub(s.publishedAt) >= gap {
				s.publish()
				s.publishedAt = now
			} else {
				publishDue = s.publishedAt.Add(gap)
			}
		}
		wake := s.nextWake()
		if !publishDue.IsZero() && (wake.IsZero() || publishDue.Before(wake)) {
			wake = publishDue
		}
		if !wake.IsZero() {
			timer.Reset(max(wake.Sub(now), 0))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return s.cancel()
		case ev := <-s.inbox:
			s.handle(ev, time.Now())
			// perf: what queued up behind it (200 exits of a fan-in arrive
			// together) is handled before the next step, so a burst costs
			// one step and one snapshot, not one per event. Bounded by what
			// is queued now, so pings and signals still get their turn.
			for n := len(s.inbox); n > 0; n-- {
				s.handle(<-s.inbox, time.Now())
			}
		case st := <-stamped:
			s.onSignal(st.sig, st.at)
		case reply := <-s.pings:
			close(reply)
		case <-timer.C:
		}
	}
}

// cancel is the "caller is done waiting" path: SIGKILL every group and wait
// (bounded) until the children are reaped.
func (s *Supervisor) cancel() Outcome {
	s.cancelAll()
	if !s.haveResult {
		s.outcome = Outcome{Reason: ReasonCancelled, Detail: "cancelled"}
		s.haveResult = true
	}
	s.phase = PhaseStopping
	s.cancelled = true
	s.killAll("supervisor cancelled")
	for _, r := range s.recs {
		if r.lingering != nil { // its group just got SIGKILL too
			ex := *r.lingering
			r.lingering = nil
			s.onExit(r, ex, time.Now())
		}
	}
	limit := time.After(5 * time.Second)
	for s.alive > 0 {
		select {
		case ev := <-s.inbox:
			s.handle(ev, time.Now())
		case <-limit:
			s.log.Error("children still alive after cancel", "count", s.alive)
			return s.outcome
		}
	}
	s.publish()
	return s.outcome
}

// dupSignalWindow: the same signal arriving again within this is one
// delivery seen twice (coreutils timeout signals both the pid and its
// group), not a second signal.
const dupSignalWindow = 10 * time.Millisecond

type stampedSignal struct {
	sig os.Signal
	at  time.Time
}

func (s *Supervisor) onSignal(sig os.Signal, now time.Time) {
	ss, _ := sig.(syscall.Signal)
	switch ss {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT:
		dup := sig == s.lastSig && now.Sub(s.lastSigAt) < dupSignalWindow
		s.lastSig, s.lastSigAt = sig, now
		if s.phase == PhaseStopping {
			switch {
			case dup:
				s.log.Debug("same signal twice within "+dupSignalWindow.String()+": one delivery", "signal", sig.String())
			case ss == syscall.SIGQUIT:
				s.armed = true
				s.log.Info("signal received during teardown, teardown continues", "signal", sig.String())
			case !s.armed:
				// The teardown began by itself (jobs done, a fatal failure):
				// this is the orchestrator's first word, not its second.
				s.armed = true
				s.log.Info("signal received during teardown: teardown continues; a second signal kills everything", "signal", sig.String())
			default:
				s.log.Warn("second signal: killing everything now", "signal", sig.String())
				s.killAll("second " + sig.String())
			}
			return
		}
		s.armed = true
		s.teardown(Outcome{Reason: ReasonSignal, Signal: sig, Detail: "received " + sig.String()}, now)
	case syscall.SIGUSR1, syscall.SIGUSR2:
		for _, r := range s.recs {
			if r.child != nil {
				if err := r.child.Signal(ss); err != nil {
					s.log.Warn("forward signal", "process", r.p.Name, "signal", sig.String(), "err", err)
				}
			}
		}
	case syscall.SIGHUP:
		s.onHangup()
	default:
		s.log.Debug("signal ignored", "signal", sig.String())
	}
}

// teardown enters the stopping phase. The first cause wins.
func (s *Supervisor) teardown(o Outcome, now time.Time) {
	if s.phase == PhaseStopping {
		return
	}
	if !s.haveResult {
		s.outcome, s.haveResult = o, true
	}
	s.phase = PhaseStopping
	s.deadline = now.Add(s.cfg.ShutdownTimeout)
	s.outcome.Deadline = s.deadline
	s.tl.TeardownBegan(s.outcome.Detail, s.cfg.ShutdownTimeout, now)
	if cr, ok := s.tl.(CauseRecorder); ok && s.outcome.Process != "" {
		cr.TeardownCause(s.outcome.Process)
	}
	s.log.Info("teardown started", "cause", o.Detail, "shutdown_timeout", s.cfg.ShutdownTimeout.String())
	// Probes of stopping processes must not restart anything (FAULTS C13).
	for _, r := range s.recs {
		if r.cancelProbe != nil {
			r.cancelProbe()
			r.cancelProbe = nil
		}
		r.wantStop = intentNone // teardown orders every stop from now on
	}
	s.publish() // /readyz must turn 503 before the first stop signal goes out
}

func (s *Supervisor) fatal(r *record, code int, why string, now time.Time) {
	r.state = Failed
	r.reason = why
	s.log.Error("fatal failure", "process", r.p.Name, "reason", why)
	s.teardown(Outcome{Reason: ReasonFatal, Process: r.p.Name, Code: code, Detail: r.p.Name + ": " + why}, now)
}

// killAll sends SIGKILL to every live group and cuts off every stop.command
// still running, including those of processes that already exited.
func (s *Supervisor) killAll(why string) {
	s.killingAll = true
	for _, r := range s.recs {
		if r.child != nil && !r.killed {
			s.kill(r, why)
		}
		if r.cancelHook != nil {
			r.cancelHook()
		}
	}
}

func (s *Supervisor) kill(r *record, why string) {
	if r.cancelHook != nil {
		r.cancelHook() // SIGKILL ends the stop: its hook goes too
	}
	r.killed = true
	r.killedAt = time.Now()
	if r.state == Starting || r.state == Running {
		r.state = Stopping
	}
	if s.phase == PhaseStopping {
		s.outcome.Killed = true // a restart's escalation does not count
	}
	s.log.Warn("sending SIGKILL", "process", r.p.Name, "pid", r.pid, "reason", why)
	if err := r.child.Signal(syscall.SIGKILL); err != nil {
		s.log.Warn("kill", "process", r.p.Name, "err", err)
	}
	s.tl.Signalled(r.p.Name, r.gen, syscall.SIGKILL, time.Now())
}

// step applies the start, restart, timeout and teardown rules at now. Records
// are in topological order, so a start that satisfies a dependent's `started`
// condition is seen by that dependent in the same pass.
func (s *Supervisor) step(now time.Time) {
	s.settleGroups(now) // first: an exit may start the teardown
	if s.phase == PhaseStopping {
		s.stepTeardown(now)
		return
	}
	s.stepWantedStops(now)
	// Starts happen in waves: everything startable is launched together,
	// then the pass repeats, since a start can satisfy a dependent's
	// `started` condition. A wave is at most maxWave launches; the rest
	// waits for the next step (see moreStarts).
	s.moreStarts = false
	for !s.moreStarts {
		var starts []*record
		for _, r := range s.recs {
			switch r.state {
			case Pending:
				if r.wantStop == intentNone && s.depsHold(r) && s.afterGone(r) {
					if r.relaunch {
						r.relaunch = false
						r.restarts++
						if r.reason == reasonFollows {
							r.followed++ // not its own failure: not against restart.limit
						}
					}
					starts = append(starts, r)
				}
			case Backoff:
				if now.Before(r.due) || s.restartDependentsAlive(r) || !s.afterGone(r) {
					break
				}
				if !s.depsHold(r) {
					// Its dependency is itself down: restarting now would
					// start it against nothing. It waits like a new start.
					r.state, r.relaunch = Pending, true
					s.log.Info("restart waits for dependencies", "process", r.p.Name, "waiting_for", strings.Join(s.waitingFor(r), ", "))
					break
				}
				r.restarts++
				starts = append(starts, r)
			case Starting:
				if r.wantStop != intentNone {
					break
				}
				if r.p.StartTimeout > 0 && !now.Before(r.due) && r.p.Ready != nil {
					s.log.Warn("start timeout", "process", r.p.Name, "start_timeout", r.p.StartTimeout.String(), "last", r.readyDetail)
					r.reason = "start timeout " + r.p.StartTimeout.String() + " exceeded"
					s.requestStop(r, intentFail, now)
				} else if !now.Before(r.remindAt) && r.p.Ready != nil {
					s.log.Info("still waiting for readiness", "process", r.p.Name, "check", r.p.Ready.Kind.String(), "last", r.readyDetail, "waited", now.Sub(r.startedAt).Round(time.Second).String())
					r.remindAt = now.Add(reminderEvery)
				}
			case Stopping:
				s.escalate(r, now)
			}
		}
		if len(starts) == 0 {
			break
		}
		if len(starts) > maxWave {
			starts, s.moreStarts = starts[:maxWave], true
		}
		if n := s.startAll(starts, now); n < len(starts) {
			s.moreStarts = true
		}
		if s.phase == PhaseStopping { // a start failed fatally
			s.stepTeardown(now)
			return
		}
	}
	if s.phase == PhaseStarting && s.allReady() {
		s.phase = PhaseRunning
		s.log.Info("all processes ready")
		// perf: return the start-up's garbage to the OS now rather than
		// over minutes (RSS with 200 children), off the loop.
		go debug.FreeOSMemory()
	}
}

// maxWave bounds the launches of one step (see also waveBudget), so the
// loop stays responsive (/livez) while thousands start.
const maxWave = 1024

// publishEvery spaces snapshots while a big start goes on in waves.
const publishEvery = 100 * time.Millisecond

// publishMin spaces snapshots otherwise: what /status and /readyz show is
// at most this much older than the loop's state.
const publishMin = time.Millisecond

// requestStop asks for r to be stopped outside teardown, and with it, first,
// every process that depends on it through restart: true, transitively
// (a <- b <- c stops c, then b, then a: never a process while a dependent
// that asked to follow it runs). Dependents without a child (in backoff,
// stopped) wait as pending for their dependency instead.
func (s *Supervisor) requestStop(r *record, intent stopIntent, now time.Time) {
	s.markStop(r, intent)
	s.stepWantedStops(now)
}

func (s *Supervisor) markStop(r *record, intent stopIntent) {
	if r.child != nil && r.state != Stopping && r.wantStop == intentNone {
		r.wantStop = intent
	}
	for _, d := range r.restartDeps {
		dr := s.recs[d]
		switch {
		case dr.child != nil && dr.state != Stopping && dr.wantStop == intentNone:
			s.log.Info("stopping dependent before its dependency restarts", "process", dr.p.Name, "dependency", r.p.Name)
			s.markStop(dr, intentCascade)
		case dr.child == nil && !dr.held && !dr.gone && (dr.state == Backoff || dr.state == Stopped):
			dr.relaunch = dr.relaunch || dr.state == Backoff
			dr.state = Pending
			s.markStop(dr, intentCascade) // its own dependents
		}
		// A dependent already stopping finishes its stop; it restarts
		// only once this dependency holds again.
	}
}

// stepWantedStops begins the stops requested by requestStop whose restart:
// true dependents are all gone. Dependents come later in s.recs, so one
// reverse pass starts every stop that can start now.
func (s *Supervisor) stepWantedStops(now time.Time) {
	for i := len(s.recs) - 1; i >= 0; i-- {
		r := s.recs[i]
		if r.wantStop == intentNone {
			continue
		}
		if r.child == nil || r.state == Stopping {
			r.wantStop = intentNone
			continue
		}
		if s.restartDependentsAlive(r) || (r.wantStop == intentHold || r.wantStop == intentRemove) && s.dependentsAlive(r) {
			continue // podvisor stop and removal take every dependent down first
		}
		intent := r.wantStop
		r.wantStop = intentNone
		s.beginStop(r, intent, now)
	}
}

func (s *Supervisor) stepTeardown(now time.Time) {
	pastDeadline := !now.Before(s.deadline)
	for i := len(s.recs) - 1; i >= 0; i-- {
		r := s.recs[i]
		switch r.state {
		case Pending, Backoff:
			r.state = Stopped
			if r.reason == "" {
				r.reason = "not started: shutting down"
			}
		case Starting, Running:
			if r.child != nil && !s.dependentsAlive(r) {
				s.beginStop(r, intentNone, now)
			}
		case Stopping:
			s.escalate(r, now)
		}
		if pastDeadline && r.child != nil && !r.killed {
			s.kill(r, "shutdown_timeout "+s.cfg.ShutdownTimeout.String()+" reached")
		}
	}
	if at := s.abandonAt(); !at.IsZero() && !now.Before(at) {
		// A child in uninterruptible sleep (a hung NFS mount, a FUSE
		// server gone) survives SIGKILL until the kernel lets it go;
		// podvisor must not wait for it forever.
		var pids []string
		for _, r := range s.recs {
			if r.child != nil {
				pids = append(pids, fmt.Sprintf("%s (pid %d)", r.p.Name, r.pid))
			}
		}
		s.log.Error("processes still alive "+finalGrace.String()+" after SIGKILL (uninterruptible sleep?): exiting without them", "processes", strings.Join(pids, ", "))
		s.abandoned = true
	}
}

// finalGrace is how long podvisor waits for children that got SIGKILL
// before it gives up on them and exits.
const finalGrace = 5 * time.Second

// abandonAt is when to give up waiting for SIGKILLed children: finalGrace
// after the last SIGKILL, once every live child has had one; zero while
// some live child has not been killed.
func (s *Supervisor) abandonAt() time.Time {
	var last time.Time
	for _, r := range s.recs {
		if r.child == nil {
			continue
		}
		if !r.killed {
			return time.Time{}
		}
		if r.killedAt.After(last) {
			last = r.killedAt
		}
	}
	if last.IsZero() {
		return last
	}
	return last.Add(finalGrace)
}

// groupPoll is how often a lingering process group is checked for members.
const groupPoll = 20 * time.Millisecond

// groupAlive reports whether c's process group still has members; children
// that cannot tell (test fakes) have none beyond the leader.
func groupAlive(c Child) bool {
	g, ok := c.(interface{ GroupAlive() bool })
	return ok && g.GroupAlive()
}

// settleGroups completes the exit of every lingering record whose process
// group is now empty. Until then the record stays stopping and alive, so its
// dependencies wait and escalate sends SIGKILL to the group at its due time.
func (s *Supervisor) settleGroups(now time.Time) {
	for _, r := range s.recs {
		if r.lingering == nil || now.Before(r.pollAt) {
			continue
		}
		if groupAlive(r.child) {
			r.pollAt = now.Add(groupPoll)
			continue
		}
		ex := *r.lingering
		r.lingering = nil
		s.onExit(r, ex, now)
	}
}

// escalate sends SIGKILL once a stopping child has outlived its stop budget.
func (s *Supervisor) escalate(r *record, now time.Time) {
	if r.child != nil && !r.killed && !now.Before(r.due) {
		why := "stop timeout " + r.p.Stop.Timeout.String() + " exceeded"
		if s.phase == PhaseStopping && !r.due.Before(s.deadline) {
			// beginStop clipped the stop budget to the global one: say which.
			why = "shutdown_timeout " + s.cfg.ShutdownTimeout.String() + " reached"
		}
		s.kill(r, why)
	}
}

func (s *Supervisor) beginStop(r *record, intent stopIntent, now time.Time) {
	r.state = Stopping
	r.intent = intent
	s.tl.StopRequested(r.p.Name, r.gen, s.stopWhy(r, intent), now)
	r.due = now.Add(r.p.Stop.Timeout)
	if s.phase == PhaseStopping && r.due.After(s.deadline) {
		r.due = s.deadline
	}
	if r.cancelProbe != nil {
		r.cancelProbe()
		r.cancelProbe = nil
	}
	if len(r.p.Stop.Command) > 0 {
		// The hook runs inside the stop budget, less a grace for the stop
		// signal: a hanging hook must not mean the signal is never sent
		// (Kubernetes sends TERM when a preStop hook overruns, too).
		r.stopCmd = true
		s.stopCmds++
		s.tl.StopCommand(r.p.Name, r.gen, false, nil, now)
		hookBy := r.due.Add(-hookGrace(r.due.Sub(now)))
		ctx, cancel := context.WithDeadline(s.probeCtx, hookBy)
		r.cancelHook = cancel
		idx, gen, p := r.idx, r.gen, r.p
		go func() {
			defer cancel()
			err := s.launcher.StopCommand(ctx, p)
			s.send(stopCmdDoneEv{idx: idx, gen: gen, err: err})
		}()
		return
	}
	s.sendStopSignal(r)
}

// hookGrace is the part of a stop budget kept for the stop signal after a
// stop.command: a quarter of it, at most 2 s.
func hookGrace(budget time.Duration) time.Duration {
	return min(budget/4, 2*time.Second)
}

func (s *Supervisor) sendStopSignal(r *record) {
	if r.child == nil {
		return
	}
	if err := r.child.Signal(r.p.Stop.Signal); err != nil {
		s.log.Warn("stop signal", "process", r.p.Name, "err", err)
	}
	s.tl.Signalled(r.p.Name, r.gen, r.p.Stop.Signal, time.Now())
	// A stopped (SIGSTOP) process would ignore the stop signal until SIGKILL.
	if r.p.Stop.Signal != syscall.SIGCONT {
		_ = r.child.Signal(syscall.SIGCONT)
	}
}

// spawnParallelism bounds concurrent launches in one wave. Each launch
// spends most of its time waiting for the kernel (fork, exec), so a few in
// flight keep both cores busy when hundreds of processes start together.
const spawnParallelism = 4

// startAll launches a wave of processes. Launch touches no supervisor state,
// so up to spawnParallelism run at once; the results are applied here, by
// the loop, in record order. While it waits for launches the loop still
// answers pings, so /livez stays prompt however long a wave takes on a busy
// machine. Once the wave has taken waveBudget no further launch begins (the
// loop must get back to signals and exits while thousands start); it returns
// how many of rs, from the front, it launched.
func (s *Supervisor) startAll(rs []*record, now time.Time) int {
	type result struct {
		i     int
		child Child
		err   error
	}
	res := make([]result, len(rs))
	prepare := func(i int) Hooks {
		r := rs[i]
		r.gen++
		s.tl.Spawned(r.p.Name, r.gen, now)
		gen, idx := r.gen, r.idx
		r.ready, r.killed, r.intent = false, false, intentNone
		r.readyAt, r.status, r.readyDetail = time.Time{}, "", ""
		return Hooks{
			Exited: func(ex proc.Exit) { s.send(exitedEv{idx: idx, gen: gen, exit: ex}) },
			Ready:  func(detail string) { s.send(readyEv{idx: idx, gen: gen, ready: true, detail: detail}) },
			Status: func(st string) { s.send(statusEv{idx: idx, gen: gen, status: st}) },
		}
	}
	n := len(rs)
	if n == 1 {
		h := prepare(0)
		res[0].child, res[0].err = s.launcher.Launch(rs[0].p, rs[0].gen, h)
	} else {
		budget := time.Now().Add(waveBudget)
		results := make(chan result, spawnParallelism)
		launched, inflight := 0, 0
		for launched < n || inflight > 0 {
			if launched < n && inflight < spawnParallelism {
				if launched > 0 && time.Now().After(budget) {
					n = launched // the rest waits for the next step
					continue
				}
				i, r, h := launched, rs[launched], prepare(launched)
				go func() {
					c, err := s.launcher.Launch(r.p, r.gen, h)
					results <- result{i, c, err}
				}()
				launched++
				inflight++
				continue
			}
			select {
			case out := <-results:
				res[out.i] = out
				inflight--
			case reply := <-s.pings:
				close(reply)
			}
		}
	}
	for i, r := range rs[:n] {
		s.started(r, res[i].child, res[i].err, now)
	}
	return n
}

// waveBudget bounds the time a wave goes on starting launches. Each wave
// ends by waiting for the launches in flight, which idles spawn capacity
// for part of a launch: a shorter budget answers /livez sooner but starts
// thousands more slowly (10 ms cost a 5,000 start about a third more, and
// 25 ms with waves of 128 a 200 start some 15%: 40 ms keeps most starts of
// hundreds in one wave and /livez within about 50 ms).
const waveBudget = 40 * time.Millisecond

// started records the result of one launch.
func (s *Supervisor) started(r *record, child Child, err error, now time.Time) {
	if err != nil {
		s.tl.Exited(r.p.Name, r.gen, -1, false, "spawn failed", now) // the incarnation ends unstarted
		var se *proc.SpawnError
		if errors.As(err, &se) && !se.Retryable() {
			// Not found, not executable, bad user: retrying cannot help.
			r.reason = err.Error()
			s.fatal(r, -1, "cannot start: "+err.Error(), now)
			return
		}
		// Out of pids, fds or memory: a failed start, retried with backoff
		// per the restart policy (FAULTS D7).
		r.reason = "cannot start: " + err.Error()
		s.onFailure(r, -1, 0, now)
		return
	}
	r.child, r.pid = child, child.Pid()
	s.alive++
	r.everStarted = true
	r.startedAt = now
	r.reason = ""
	s.tl.Started(r.p.Name, r.gen, r.pid, time.Now())
	// At info, so the start order shows in the log (a process without a
	// readiness check logs nothing else when it starts). LogAttrs: no
	// boxing of the attributes into a []any on this per-start path.
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "started", slog.String("process", r.p.Name), slog.Int("pid", r.pid))

	ready := r.p.Ready
	switch {
	case r.p.Type != config.Service:
		r.state = Running // a oneshot or job is "ready" only once it completed
	case ready == nil:
		r.state = Running
		r.ready, r.readyAt = true, now
		s.tl.Ready(r.p.Name, r.gen, time.Now())
	default:
		r.state = Starting
		r.remindAt = now.Add(reminderEvery)
		if r.p.StartTimeout > 0 {
			r.due = now.Add(r.p.StartTimeout)
		}
	}
	var ctx context.Context
	if ready != nil && isPolled(ready.Kind) || r.p.Live != nil {
		ctx, r.cancelProbe = context.WithCancel(s.probeCtx)
	}
	if ready != nil && isPolled(ready.Kind) {
		s.watch(ctx, r, ready, "ready", now)
	}
	if r.p.Live != nil && r.state == Running {
		s.watch(ctx, r, r.p.Live, "live", now)
	}
}

func isPolled(k config.ProbeKind) bool {
	switch k {
	case config.ProbeHTTP, config.ProbeTCP, config.ProbeExec, config.ProbeFile:
		return true
	}
	return false
}

// watch starts a probe goroutine for the record's current generation.
func (s *Supervisor) watch(ctx context.Context, r *record, probe *config.Probe, which string, since time.Time) {
	if s.checkers == nil {
		s.log.Error("no checker factory: probe ignored", "process", r.p.Name, "probe", which)
		return
	}
	c, err := s.checkers(r.p, probe, since)
	if err != nil {
		s.log.Error("cannot build probe", "process", r.p.Name, "probe", which, "err", err)
		return
	}
	idx, gen, name := r.idx, r.gen, r.p.Name
	c = &shortageLogger{Checker: c, log: s.log, process: name, probe: which}
	t := health.TimingFrom(probe)
	var observe func(time.Duration, bool)
	if s.obs != nil {
		observe = func(d time.Duration, ok bool) { s.obs.ProbeObserved(name, which, d, ok) }
	}
	if which == "ready" {
		// Watch reports only transitions; until the first success the loop
		// hears nothing, so a failed attempt's detail (timeout, not found,
		// HTTP 500) is passed on here for the "still waiting" and "start
		// timeout" lines and /status (FAULTS C1, C3).
		c = &reportingChecker{Checker: c, failed: func(detail string) {
			s.send(probeFailedEv{idx: idx, gen: gen, detail: detail})
		}}
		go health.Watch(ctx, c, t, func(tr health.Transition) {
			s.send(readyEv{idx: idx, gen: gen, ready: tr.Ready, detail: tr.Detail})
		}, observe)
		return
	}
	t.StartReady = true
	go health.Watch(ctx, c, t, func(tr health.Transition) {
		s.send(liveEv{idx: idx, gen: gen, healthy: tr.Ready, detail: tr.Detail})
	}, observe)
}

// shortageLogger logs when podvisor's own resources (fds, memory,
// processes) keep a probe from running, and when it runs again: such
// attempts are not failures of the process (health.Result.Inconclusive).
type shortageLogger struct {
	health.Checker
	log            *slog.Logger
	process, probe string
	short          bool // only touched by the Watch goroutine
}

func (c *shortageLogger) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	switch {
	case res.Inconclusive && !c.short:
		c.short = true
		c.log.Error("cannot run probe (podvisor's own resources; not counted against the process, retrying with backoff)", "process", c.process, "probe", c.probe, "detail", res.Detail)
	case !res.Inconclusive && c.short:
		c.short = false
		c.log.Info("probe runs again", "process", c.process, "probe", c.probe)
	}
	return res
}

// reportingChecker passes on the detail of failed attempts whose detail
// differs from the previous failure's, so a steady failure costs one event.
type reportingChecker struct {
	health.Checker
	failed func(detail string)
	last   string // only touched by the Watch goroutine that calls Check
}

func (c *reportingChecker) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	if !res.OK && !res.Inconclusive && res.Detail != c.last {
		c.last = res.Detail
		c.failed(res.Detail)
	}
	if res.OK {
		c.last = ""
	}
	return res
}

func (s *Supervisor) handle(ev event, now time.Time) {
	switch e := ev.(type) {
	case probeFailedEv:
		r := s.recs[e.idx]
		if e.gen == r.gen && r.child != nil && r.state == Starting {
			r.readyDetail = e.detail
		}
	case exitedEv:
		r := s.recs[e.idx]
		if e.gen != r.gen || r.child == nil || r.lingering != nil {
			return
		}
		// A stopping leader's group must be empty before its stop is over;
		// in teardown also a leader that exited by itself, whose group
		// members its dependencies must still outlive.
		if (r.state == Stopping || s.phase == PhaseStopping) && !s.cancelled && groupAlive(r.child) {
			ex := e.exit
			r.lingering, r.pollAt = &ex, now.Add(groupPoll)
			return
		}
		s.onExit(r, e.exit, now)
	case readyEv:
		r := s.recs[e.idx]
		// A stopping incarnation's readiness (a ready line printed in its
		// TERM trap) must not start a dependent against a dying process.
		if e.gen != r.gen || r.child == nil || r.state == Stopping || r.wantStop != intentNone || r.lingering != nil {
			return
		}
		s.onReady(r, e.ready, e.detail, now)
	case liveEv:
		r := s.recs[e.idx]
		if e.gen != r.gen || r.child == nil || s.phase == PhaseStopping || r.state == Stopping {
			return
		}
		if !e.healthy && r.wantStop == intentNone {
			s.log.Warn("liveness check failed: restarting", "process", r.p.Name, "detail", e.detail)
			r.reason = "liveness check failed: " + e.detail
			s.requestStop(r, intentFail, now)
		}
	case statusEv:
		r := s.recs[e.idx]
		if e.gen == r.gen {
			r.status = e.status
		}
	case commandEv:
		s.onCommand(e, now)
	case hangupLoadedEv:
		s.onHangupLoaded(e, now)
	case stopCmdDoneEv:
		r := s.recs[e.idx]
		s.stopCmds--
		if e.gen != r.gen || !r.stopCmd {
			return
		}
		r.stopCmd = false
		r.cancelHook = nil
		s.tl.StopCommand(r.p.Name, r.gen, true, e.err, now)
		if e.err != nil {
			s.log.Warn("stop command failed", "process", r.p.Name, "err", e.err)
		}
		if r.child != nil && !r.killed {
			s.sendStopSignal(r)
		}
	}
}

func (s *Supervisor) onReady(r *record, ready bool, detail string, now time.Time) {
	r.readyDetail = detail
	if r.p.Type != config.Service || ready == r.ready {
		return
	}
	r.ready = ready
	if !ready {
		s.log.Warn("not ready", "process", r.p.Name, "detail", detail)
		return
	}
	s.tl.Ready(r.p.Name, r.gen, now)
	if r.readyAt.IsZero() {
		r.readyAt = now
		s.log.Info("ready", "process", r.p.Name, "after", now.Sub(r.startedAt).Round(time.Millisecond).String())
	} else {
		s.log.Info("ready again", "process", r.p.Name)
	}
	if r.state == Starting {
		r.state = Running
		r.due = time.Time{}
		if r.p.Live != nil && s.phase != PhaseStopping {
			var ctx context.Context
			if r.cancelProbe == nil {
				ctx, r.cancelProbe = context.WithCancel(s.probeCtx)
			} else {
				// One cancel must stop both probes of the incarnation.
				ctx, r.cancelProbe = chainCancel(s.probeCtx, r.cancelProbe)
			}
			s.watch(ctx, r, r.p.Live, "live", now)
		}
	}
}

// chainCancel returns a context derived from parent whose cancel also calls prev.
func chainCancel(parent context.Context, prev context.CancelFunc) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	return ctx, func() { cancel(); prev() }
}

func (s *Supervisor) onExit(r *record, ex proc.Exit, now time.Time) {
	code := ex.Code()
	oom := s.oomKilled(r, ex)
	s.recordExit(r, r.gen, code, oom, ex.At)
	last := code // code itself may be replaced below by the fatal outcome's code
	r.exitCode, r.exitedAt = &last, ex.At
	r.child, r.pid = nil, 0
	s.alive--
	if r.cancelProbe != nil {
		r.cancelProbe()
		r.cancelProbe = nil
	}
	if r.stopCmd {
		r.stopCmd = false // its done event is now stale
		if r.cancelHook != nil {
			r.cancelHook() // the process is gone: its hook has nothing left to stop
			r.cancelHook = nil
		}
	}
	ran := now.Sub(r.startedAt)
	r.ready = false
	success := r.p.IsSuccess(code)

	if s.phase == PhaseStopping {
		if r.p.Type != config.Service && success && r.state != Stopping {
			r.state = Completed
		} else {
			r.state = Stopped
		}
		s.log.Info("exited", "process", r.p.Name, "code", code)
		return
	}

	intent := r.intent
	r.intent = intentNone
	if s.operatorExit(r, intent, code) {
		return
	}
	if intent == intentCascade {
		r.state = Pending
		r.relaunch = true // its start again counts as a restart
		r.reason = reasonFollows
		s.log.Info("stopped for dependency restart", "process", r.p.Name, "code", code)
		return
	}
	failed := !success || intent == intentFail
	if intent == intentFail {
		code = -1 // podvisor stopped it; its own exit code says nothing
	}

	if !failed {
		switch {
		case r.p.Type != config.Service:
			r.state = Completed
			s.log.Info("completed", "process", r.p.Name, "after", ran.Round(time.Millisecond).String())
			if r.p.Type == config.Job && s.allJobsDone() {
				s.teardown(Outcome{Reason: ReasonJobsDone, Detail: "all jobs completed"}, now)
			}
			return
		case r.p.Restart.Policy != config.Always:
			r.state = Stopped
			r.reason = fmt.Sprintf("exited with code %d", code)
			s.log.Info("exited", "process", r.p.Name, "code", code, "restart", r.p.Restart.Policy.String())
			return
		}
		s.log.Warn("exited", "process", r.p.Name, "code", code, "ran", ran.Round(time.Millisecond).String())
		s.scheduleRestart(r, ran, now)
		return
	}

	if r.reason == "" || intent != intentFail {
		r.reason = fmt.Sprintf("exited with code %d", code)
	}
	if oom {
		r.reason = ReasonOOMKilled
	}
	s.onFailure(r, code, ran, now)
}

// onFailure applies the restart policy to a failed start or run: restart
// with backoff, or give up, which is fatal.
func (s *Supervisor) onFailure(r *record, code int, ran time.Duration, now time.Time) {
	if r.p.Restart.Policy == config.Never {
		s.fatal(r, code, r.reason, now)
		return
	}
	if r.p.Restart.Limit > 0 && r.restarts-r.followed >= r.p.Restart.Limit {
		s.fatal(r, code, fmt.Sprintf("%s; restart limit %d reached", r.reason, r.p.Restart.Limit), now)
		return
	}
	s.log.Warn("failed", "process", r.p.Name, "reason", r.reason, "ran", ran.Round(time.Millisecond).String())
	s.scheduleRestart(r, ran, now)
}

func (s *Supervisor) scheduleRestart(r *record, ran time.Duration, now time.Time) {
	rs := r.p.Restart
	r.delay = nextBackoff(r.delay, rs.Backoff, rs.MaxBackoff, ran, config.BackoffResetAfter)
	r.state = Backoff
	r.due = now.Add(r.delay)
	s.log.Info("restarting", "process", r.p.Name, "in", r.delay.String(), "restarts", r.restarts+1)
	s.requestStop(r, intentCascade, now) // r has no child: only its dependents
}

func (s *Supervisor) depsHold(r *record) bool {
	for _, d := range r.deps {
		if !s.holds(s.recs[d.idx], d.cond) {
			return false
		}
	}
	return true
}

func (s *Supervisor) holds(r *record, c graph.Condition) bool {
	switch c {
	case graph.Started:
		// Running now (or completed): a dependency in backoff, stopping or
		// stopped does not hold `started`, or a restart: true dependent
		// would restart at once and hold its dependency in backoff forever.
		if r.state == Completed {
			return true
		}
		return r.child != nil && (r.state == Starting || r.state == Running) && r.wantStop == intentNone
	case graph.Ready:
		if r.p.Type != config.Service {
			return r.state == Completed
		}
		return r.ready && r.child != nil && r.state == Running && r.wantStop == intentNone
	case graph.Completed:
		return r.state == Completed
	}
	return false
}

// waitingFor lists r's unmet conditions: "db: ready", and the processes
// its reload removed that are still stopping: "web: stopped".
func (s *Supervisor) waitingFor(r *record) []string {
	var out []string
	for _, x := range r.after {
		if x.child != nil || x.lingering != nil {
			out = append(out, x.p.Name+": stopped")
		}
	}
	for _, d := range r.deps {
		dr := s.recs[d.idx]
		if !s.holds(dr, d.cond) {
			out = append(out, dr.p.Name+": "+d.cond.String())
		}
	}
	return out
}

// afterGone reports whether the processes r's reload removed are all gone
// (see record.after), forgetting them once they are.
func (s *Supervisor) afterGone(r *record) bool {
	if awaitsStops(r) {
		return false
	}
	r.after = nil
	return true
}

// awaitsStops reports whether a process that r's reload removed is still
// alive: r may not start yet, and its exit (not the clock) lets r go on.
func awaitsStops(r *record) bool {
	for _, x := range r.after {
		if x.child != nil || x.lingering != nil {
			return true
		}
	}
	return false
}

func (s *Supervisor) dependentsAlive(r *record) bool {
	for _, d := range r.dependents {
		if s.recs[d].child != nil {
			return true
		}
	}
	return false
}

func (s *Supervisor) restartDependentsAlive(r *record) bool {
	for _, d := range r.restartDeps {
		if s.recs[d].child != nil {
			return true
		}
	}
	return false
}

func (s *Supervisor) allJobsDone() bool {
	for _, r := range s.recs {
		if r.p.Type == config.Job && r.state != Completed && !r.gone {
			return false
		}
	}
	return true
}

// isReady is the per-process part of /readyz: services ready, oneshots
// completed; jobs do not count (they end the run).
func (s *Supervisor) isReady(r *record) bool {
	if r.gone {
		return true // removed by a reload: no longer counts
	}
	switch r.p.Type {
	case config.Service:
		return r.ready && r.child != nil && r.state == Running
	case config.Oneshot:
		return r.state == Completed
	}
	return true
}

func (s *Supervisor) allReady() bool {
	for _, r := range s.recs {
		if !s.isReady(r) {
			return false
		}
	}
	return true
}

// nextWake is the earliest instant at which step has something to do.
func (s *Supervisor) nextWake() time.Time {
	if s.moreStarts {
		// The next wave, as soon as pending events are handled. Any past
		// instant does: Run arms the timer with max(wake-now, 0).
		return time.Unix(0, 1)
	}
	var w time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (w.IsZero() || t.Before(w)) {
			w = t
		}
	}
	// Once the deadline has passed and everything got SIGKILL, only exit
	// events remain: waking at the past deadline again would spin the loop.
	if s.phase == PhaseStopping && !s.deadline.IsZero() && s.unkilled() {
		consider(s.deadline)
	}
	if s.phase == PhaseStopping {
		consider(s.abandonAt())
	}
	for _, r := range s.recs {
		switch r.state {
		case Backoff:
			// While restart: true dependents are still alive, or processes
			// its reload removed, their exit event (not the clock) is what
			// lets the restart go ahead.
			if s.phase != PhaseStopping && !s.restartDependentsAlive(r) && !awaitsStops(r) {
				consider(r.due)
			}
		case Starting:
			// A start that is to stop (wantStop) waits for its dependents'
			// exits, not for the clock.
			// In teardown start timeouts no longer apply (waking for one
			// would spin the loop until the process's turn to stop).
			if r.p.Ready != nil && r.wantStop == intentNone && s.phase != PhaseStopping {
				if r.p.StartTimeout > 0 {
					consider(r.due)
				}
				consider(r.remindAt)
			}
		case Stopping:
			if r.child != nil && !r.killed {
				consider(r.due)
			}
			if r.lingering != nil {
				consider(r.pollAt)
			}
		}
	}
	return w
}

// unkilled reports whether a live child has not been sent SIGKILL yet.
func (s *Supervisor) unkilled() bool {
	for _, r := range s.recs {
		if r.child != nil && !r.killed {
			return true
		}
	}
	return false
}

// publish stores a fresh immutable snapshot.
func (s *Supervisor) publish() {
	snap := &Snapshot{Phase: s.phase.String(), Processes: make([]ProcessSnapshot, 0, len(s.recs)), Generation: s.ops.generation}
	allReady := true
	if s.sorted == nil { // rebuilt after a reload changes the records
		s.sorted = slices.Clone(s.recs)
		slices.SortFunc(s.sorted, func(a, b *record) int { return strings.Compare(a.p.Name, b.p.Name) })
	}
	for _, r := range s.sorted {
		if r.gone && r.child == nil && r.lingering == nil {
			continue // removed by a reload, and stopped
		}
		ps := ProcessSnapshot{
			Name:      r.p.Name,
			Type:      r.p.Type.String(),
			State:     r.state.String(),
			Pid:       r.pid,
			Up:        r.child != nil,
			Ready:     s.isReady(r) && r.p.Type != config.Job,
			Restarts:  r.restarts,
			ExitCode:  r.exitCode,
			StartedAt: r.startedAt,
			ReadyAt:   r.readyAt,
			ExitedAt:  r.exitedAt,
			Status:    r.status,
			Reason:    r.reason,
			OOMKills:  r.oomKills,
		}
		if r.p.Type == config.Job {
			ps.Ready = r.state == Completed
		}
		if !r.readyAt.IsZero() {
			ps.StartDuration = r.readyAt.Sub(r.startedAt)
		}
		if r.state == Starting && ps.Reason == "" && r.readyDetail != "" {
			ps.Reason = "not ready yet: " + r.readyDetail
		}
		if r.state == Pending {
			ps.WaitingFor = s.waitingFor(r)
		}
		if !s.isReady(r) {
			allReady = false
			snap.NotReady = append(snap.NotReady, r.p.Name+" ("+r.state.String()+")")
		}
		snap.Processes = append(snap.Processes, ps)
	}
	// Processes and NotReady are in name order already (s.sorted).
	if s.phase == PhaseStopping {
		allReady = false
		snap.NotReady = append([]string{"podvisor (stopping)"}, snap.NotReady...)
	}
	snap.Ready = allReady
	s.snap.Store(snap)
	s.changed.notify()
}
