// Package timeline records the life of every incarnation of every process
// (spawned, started, ready, stop requested and why, stop.command, signals,
// exit) and turns it into what users ask about: the critical chain of the
// start-up (which dependency path decided when the last process became
// ready), a shutdown report (where the teardown budget went), a text Gantt
// chart and an SVG. Memory is bounded: each process keeps its last Keep
// incarnations.
package timeline

import (
	"github.com/podvisor/podvisor/api"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultKeep is how many incarnations per process a Recorder keeps.
const DefaultKeep = 16

// Proc describes one configured process to the Recorder.
type Proc struct {
	Name      string
	Type      string // service | oneshot | job
	DependsOn []Dep
	Scheduled bool // runs at the ticks of a schedule, not in the start-up
}

// Dep is one dependency edge: the process waits for Name to be Condition.
type Dep = api.Dependency

// Recorder receives the supervisor's events (from its loop goroutine) and
// serves documents (to HTTP handlers). A mutex guards it: both sides hold
// it only for a few field writes or one copy.
type Recorder struct {
	keep int

	mu       sync.Mutex
	start    time.Time
	procs    []*procLog
	byName   map[string]*procLog
	teardown *Shutdown
}

type procLog struct {
	Process
	dropped int
}

// New returns a Recorder for procs (in start order), keeping keep
// incarnations per process (DefaultKeep if keep < 1). start is podvisor's
// start, the origin of the chart.
func New(procs []Proc, keep int, start time.Time) *Recorder {
	if keep < 1 {
		keep = DefaultKeep
	}
	r := &Recorder{keep: keep, start: start, byName: make(map[string]*procLog, len(procs))}
	for _, p := range procs {
		deps := p.DependsOn
		if deps == nil {
			deps = []Dep{}
		}
		pl := &procLog{Process: Process{Name: p.Name, Type: p.Type, DependsOn: deps, Scheduled: p.Scheduled}}
		r.procs = append(r.procs, pl)
		r.byName[p.Name] = pl
	}
	return r
}

// Reconfigured takes in the processes of a reloaded config: an added one
// gets its own log (without it, its incarnations were not recorded at all),
// a kept one its new type and dependencies. A removed one keeps its log.
func (r *Recorder) Reconfigured(procs []Proc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range procs {
		deps := p.DependsOn
		if deps == nil {
			deps = []Dep{}
		}
		if pl := r.byName[p.Name]; pl != nil {
			pl.Type, pl.DependsOn, pl.Scheduled = p.Type, deps, p.Scheduled
			continue
		}
		pl := &procLog{Process: Process{Name: p.Name, Type: p.Type, DependsOn: deps, Scheduled: p.Scheduled}}
		r.procs = append(r.procs, pl)
		r.byName[p.Name] = pl
	}
}

// inc returns the record of name's incarnation gen, creating it (and
// dropping the oldest beyond keep) when create is set. Callers hold mu.
func (r *Recorder) inc(name string, gen uint64, create bool) *Incarnation {
	pl := r.byName[name]
	if pl == nil {
		return nil
	}
	for i := len(pl.Incarnations) - 1; i >= 0; i-- {
		if pl.Incarnations[i].Generation == gen {
			return &pl.Incarnations[i]
		}
	}
	if !create {
		return nil
	}
	if len(pl.Incarnations) >= r.keep {
		n := copy(pl.Incarnations, pl.Incarnations[1:])
		pl.Incarnations = pl.Incarnations[:n]
		pl.dropped++
	}
	pl.Incarnations = append(pl.Incarnations, Incarnation{Generation: gen})
	return &pl.Incarnations[len(pl.Incarnations)-1]
}

func (r *Recorder) update(name string, gen uint64, create bool, f func(*Incarnation)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if in := r.inc(name, gen, create); in != nil {
		f(in)
	}
}

func ptr(t time.Time) *time.Time { return &t }

// Spawned records that a launch of incarnation gen began.
func (r *Recorder) Spawned(name string, gen uint64, at time.Time) {
	r.update(name, gen, true, func(in *Incarnation) { in.Spawned = ptr(at) })
}

// Started records that incarnation gen was exec'd as pid.
func (r *Recorder) Started(name string, gen uint64, pid int, at time.Time) {
	r.update(name, gen, true, func(in *Incarnation) {
		in.Pid = pid
		in.Started = ptr(at)
		if in.Spawned == nil {
			in.Spawned = ptr(at)
		}
	})
}

// Ready records the first readiness of incarnation gen.
func (r *Recorder) Ready(name string, gen uint64, at time.Time) {
	r.update(name, gen, false, func(in *Incarnation) {
		if in.Ready == nil {
			in.Ready = ptr(at)
		}
	})
}

// StopRequested records the start of a stop and why.
func (r *Recorder) StopRequested(name string, gen uint64, why string, at time.Time) {
	r.update(name, gen, false, func(in *Incarnation) {
		if in.StopRequested == nil {
			in.StopRequested, in.StopReason = ptr(at), why
		}
	})
}

// StopCommand records that stop.command began (ended false) or ended, with
// its error if it failed.
func (r *Recorder) StopCommand(name string, gen uint64, ended bool, err error, at time.Time) {
	r.update(name, gen, false, func(in *Incarnation) {
		if !ended {
			in.StopCommandBegan = ptr(at)
			return
		}
		in.StopCommandEnded = ptr(at)
		if err != nil {
			in.StopCommandError = err.Error()
		}
	})
}

// Signalled records a stop signal or SIGKILL sent to the process group.
func (r *Recorder) Signalled(name string, gen uint64, sig syscall.Signal, at time.Time) {
	r.update(name, gen, false, func(in *Incarnation) {
		if sig == syscall.SIGKILL {
			if in.KillSent == nil {
				in.KillSent = ptr(at)
			}
			return
		}
		if in.SignalSent == nil && sig != syscall.SIGCONT {
			in.SignalSent, in.Signal = ptr(at), unix.SignalName(sig)
		}
	})
}

// Exited records the exit of incarnation gen: its code (128+N for signal
// N), whether it counts as success, and a reason such as "OOMKilled".
func (r *Recorder) Exited(name string, gen uint64, code int, success bool, reason string, at time.Time) {
	r.update(name, gen, false, func(in *Incarnation) {
		in.Exited, in.ExitCode, in.Success, in.ExitReason = ptr(at), &code, success, reason
	})
}

// TeardownBegan records the start of the teardown, its cause and budget.
func (r *Recorder) TeardownBegan(cause string, budget time.Duration, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.teardown == nil {
		r.teardown = &Shutdown{Cause: cause, Began: at, BudgetSeconds: budget.Seconds()}
	}
}

// TeardownCause records which process's failure began the teardown.
func (r *Recorder) TeardownCause(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.teardown != nil && r.teardown.Process == "" {
		r.teardown.Process = name
	}
}

// TeardownEnded records that every process is gone.
func (r *Recorder) TeardownEnded(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.teardown != nil && r.teardown.Ended == nil {
		r.teardown.Ended = ptr(at)
	}
}

// Doc returns the whole timeline as of now, with the critical chain and, once
// a teardown began, the shutdown report.
func (r *Recorder) Doc(now time.Time) Doc {
	r.mu.Lock()
	d := Doc{Start: r.start, Now: now, Processes: make([]Process, 0, len(r.procs))}
	for _, pl := range r.procs {
		p := pl.Process
		p.Incarnations = append([]Incarnation(nil), pl.Incarnations...)
		if p.Incarnations == nil {
			p.Incarnations = []Incarnation{}
		}
		p.Dropped = pl.dropped
		d.Processes = append(d.Processes, p)
	}
	var td *Shutdown
	if r.teardown != nil {
		c := *r.teardown
		td = &c
	}
	r.mu.Unlock()
	d.CriticalChain = CriticalChain(d.Processes)
	if td != nil {
		d.Shutdown = shutdownReport(*td, d.Processes, now)
	}
	return d
}
