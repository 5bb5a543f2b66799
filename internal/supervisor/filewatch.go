// File watching (`watch:` on a process): the Watcher (internal/launch)
// tells of a change that matches a pattern and no ignore pattern, after
// debounce of quiet; it restarts the process (with cascade: every
// dependent too, transitively; restart: true dependents follow in any
// case) or sends it a signal. The watchers run for the processes of the
// config podvisor started with.

package supervisor

import (
	"context"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// Watcher watches the files of a process's watch: (internal/launch).
type Watcher interface {
	// Watch calls changed, from a goroutine of its own, with one changed
	// file after each quiet period of spec.Debounce, until ctx is done. A
	// watch that cannot start is a warning, not a failure of the run.
	Watch(ctx context.Context, process string, spec *config.Watch, changed func(file string))
}

// startWatchers starts watching for each process with watch:.
func (s *Supervisor) startWatchers(ctx context.Context) {
	if s.watcher == nil {
		return
	}
	for _, r := range s.recs {
		if r.p.Watch == nil {
			continue
		}
		idx := r.idx
		s.watcher.Watch(ctx, r.p.Name, r.p.Watch, func(file string) { s.send(watchEv{idx: idx, file: file}) })
	}
}

// onWatch carries out a watch's action in the loop.
func (s *Supervisor) onWatch(e watchEv, now time.Time) {
	r := s.recs[e.idx]
	if e.name != "" {
		if r = s.byName[e.name]; r == nil {
			return
		}
	}
	if r.op.gone || r.op.held || s.phase == PhaseStopping || r.p.Watch == nil {
		return
	}
	r.count.watchEvents++
	if sig := r.p.Watch.Signal; sig != 0 {
		if r.cur.child == nil {
			return
		}
		s.log.Info("files changed: signalling", "process", r.p.Name, "file", e.file, "signal", sig.String())
		if err := r.cur.child.Signal(sig); err != nil {
			s.log.Warn("watch signal", "process", r.p.Name, "err", err)
		}
		return
	}
	targets, intent := []*record{r}, intentRestart
	if r.p.Watch.Cascade {
		// Dependency order both ways: each stops after its dependents
		// and, not holding their conditions while it waits, starts
		// again before them.
		targets, intent = append(targets, s.dependentsClosure(r)...), intentRestartTree
	}
	s.log.Info("files changed: restarting", "process", r.p.Name, "file", e.file, "cascade", r.p.Watch.Cascade)
	for _, x := range targets {
		switch {
		case x.op.held || x.op.gone:
		case x.cur.child != nil && x.state != Stopping:
			x.reason = "restarting: files changed (" + r.p.Name + ")"
			s.requestStop(x, intent, now)
		case x.cur.child == nil && (x.state == Completed || x.state == Stopped || x.state == Failed) && x.p.Schedule == nil:
			s.setState(x, Pending) // a finished oneshot or a stopped service runs again
			x.reason = "restarting: files changed (" + r.p.Name + ")"
		}
	}
}
