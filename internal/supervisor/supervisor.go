package supervisor

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// Supervisor runs the processes of one config.
type Supervisor struct {
	cfg      *config.Config
	launcher Launcher
	watcher  Watcher // nil: no file is watched (tests send watchEv themselves)
	checkers CheckerFactory
	log      *slog.Logger
	tl       emitter // Options.OnEvent
	oom      OOMDetector
	// onRunning: Options.OnRunning, nil once called.
	onRunning func()
	// onTeardown: Options.OnTeardown (teardown calls it once).
	onTeardown func()

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
	recs   []*record // in start order (topological, by level then name)
	byName map[string]*record
	phase  Phase
	alive  int
	// restartingAll holds every start while a restart-all's stops are
	// under way (rules.go).
	restartingAll bool
	restartAllAt  time.Time // and the backoff of the process that asked for it
	wallClock     func() time.Time

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
	// pastDeadline is set once a teardown step ran at or after shutdown_timeout.
	pastDeadline bool

	// afterStep, if set (tests only), is called by the loop after every
	// step, with the loop's state quiescent.
	afterStep func(now time.Time)
	// onTransition, if set (tests only), sees every state change (state.go).
	onTransition func(name string, from, to State)

	ops       operator                      // operator commands and reloads (commands.go)
	outsideOf func(*config.Config) []string // Options.Outside (subset.go)
	// moreStarts: the last step launched a full wave (maxWave) and left
	// further startable records for the next step, so that the loop answers
	// pings and signals between waves (perf: /livez while 5,000 start).
	moreStarts bool
	// moreStops: the last teardown step began stops for stopWaveBudget and
	// left further stoppable records for the next step, for the same
	// reason (perf: /livez while 10,000 stop).
	moreStops bool
	// sidecarHold: a regular process is stopping, so sidecars
	// neither restart nor are probed (sidecarhold.go).
	sidecarHold bool
	// sorted is recs by name, for publish (perf: no sort per snapshot).
	sorted      []*record
	publishedAt time.Time // last publish by Run's loop

	// The kubelet's pace (pace.go): Options.Pace, its relist schedule from
	// Run's start, and the run's end deferred to a relist.
	pace       Pace
	relist     relist
	noticed    map[string]bool
	jobsDoneAt time.Time
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
		cfg:        o.Config,
		launcher:   o.Launcher,
		watcher:    o.Watcher,
		checkers:   o.Checkers,
		log:        o.Log,
		tl:         emitter{o.OnEvent},
		oom:        o.OOM,
		onRunning:  o.OnRunning,
		onTeardown: o.OnTeardown,

		wallClock: o.WallClock,
		inbox:     make(chan event, 256),
		pings:     make(chan chan struct{}),
		reading:   make(chan struct{}, 1),
		done:      make(chan struct{}),
		byName:    make(map[string]*record, len(o.Config.Processes)),
		ops:       operator{generation: 1, load: o.Load, onReload: o.OnReload, tails: o.Tails},
		outsideOf: o.Outside,
		pace:      o.Pace,
		noticed:   map[string]bool{},
	}
	for _, name := range o.Pace.Noticed {
		s.noticed[name] = true
	}
	for _, level := range o.Config.Graph.Levels() {
		for _, name := range level {
			p := o.Config.Processes[name]
			r := newRecord(p, len(s.recs))
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
	for name := range s.outside(o.Config) {
		s.leaveOutside(s.byName[name])
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
