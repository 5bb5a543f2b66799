package supervisor

import (
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/podvisor/podvisor/internal/config"
)

// hupSettle is how long a SIGHUP waits before the file is read, so that a
// burst of them (a config management tool signalling once per file it
// writes) is one reload.
const hupSettle = 100 * time.Millisecond

// onHangup starts a reload from SIGHUP. The file is read outside the loop,
// hupSettle after the first signal of a burst; a SIGHUP that arrives before
// the read began is served by that read, one that arrives after it queues
// exactly one more reload.
func (s *Supervisor) onHangup() {
	if s.ops.load == nil {
		s.log.Info("SIGHUP ignored: no config to reload")
		return
	}
	if s.phase == PhaseStopping {
		s.log.Info("SIGHUP ignored: shutting down")
		s.observeReload("refused")
		return
	}
	if s.ops.hupLoading {
		if s.ops.hupRead.Load() {
			s.ops.hupAgain = true
		}
		return
	}
	s.log.Info("SIGHUP: reloading the config")
	s.ops.hupLoading = true
	read := &atomic.Bool{}
	s.ops.hupRead = read
	load := s.ops.load
	done := s.done
	go func() {
		select {
		case <-time.After(hupSettle):
		case <-done:
			return
		}
		// One read at a time, up to the inbox, as for podvisor reload.
		select {
		case s.reading <- struct{}{}:
		case <-done:
			return
		}
		defer func() { <-s.reading }()
		read.Store(true)
		cfg, err := load()
		s.send(hangupLoadedEv{cfg: cfg, err: err})
	}()
}

func (s *Supervisor) onHangupLoaded(e hangupLoadedEv, now time.Time) {
	s.ops.hupLoading = false
	w := &waiter{}
	if s.phase == PhaseStopping {
		s.log.Info("reload refused: shutting down")
		s.observeReload("refused")
		return
	}
	s.reload(w, e.cfg, e.err, false, now)
	s.logRefusedReload("SIGHUP", w.resp)
	if s.ops.hupAgain {
		s.ops.hupAgain = false
		s.onHangup()
	}
}

// logRefusedReload logs a refused reload and every error in it, whichever
// way it came (SIGHUP, podvisor reload): the client's answer is not
// podvisor's log.
func (s *Supervisor) logRefusedReload(via string, resp Response) {
	if resp.Error == "" {
		return
	}
	s.log.Error("reload ("+via+") refused", "err", resp.Error)
	for _, e := range resp.Errors {
		s.log.Error("config", "err", e)
	}
}

// reload applies a new config (cfg, or loadErr when it could not be loaded):
// every error first, then the plan (PlanReload), then the table of records
// is rebuilt around the processes that stay. Processes in no step of the
// plan are not touched. The waiter is answered once restarted and added
// processes are up and removed ones are gone.
func (s *Supervisor) reload(w *waiter, cfg *config.Config, loadErr error, dryRun bool, now time.Time) {
	if loadErr != nil {
		w.resp.Error = "the config has errors; nothing was changed"
		var me *multierror.Error
		if errors.As(loadErr, &me) {
			for _, e := range me.Errors {
				w.resp.Errors = append(w.resp.Errors, e.Error())
			}
		} else {
			w.resp.Errors = []string{loadErr.Error()}
		}
		s.observeReload("invalid")
		return
	}
	var busy []string
	for _, r := range s.recs {
		if r.op.gone && (r.cur.child != nil || r.cur.lingering != nil || r.old != nil) {
			busy = append(busy, r.p.Name)
		}
	}
	if len(busy) > 0 {
		w.resp.Error = "the previous reload is still stopping " + strings.Join(busy, ", ") + "; try again in a moment"
		s.observeReload("refused")
		return
	}
	states := make(map[string]State, len(s.byName))
	for name, r := range s.byName {
		states[name] = r.state
	}
	plan := PlanReload(s.cfg, cfg, states)
	w.resp.Plan = plan.Lines()
	w.resp.Generation = s.ops.generation
	if dryRun {
		return
	}

	// Every start of this reload waits for its stops (a rename: the old
	// name's process may hold the port the new one listens on).
	var stopping []*record
	for _, st := range plan.Steps {
		if st.Action != PlanStop {
			continue
		}
		r := s.byName[st.Name]
		if r.cur.child != nil || r.cur.lingering != nil || r.old != nil { // old: an overlap's outgoing incarnation
			stopping = append(stopping, r)
		}
		r.op.gone = true
		delete(s.byName, st.Name)
		r.op.held, r.relaunch = false, false
		switch {
		case r.state == Stopping:
			r.cur.intent = intentRemove
		case r.cur.child != nil:
			r.wantStop = intentRemove
		default:
			s.setState(r, Stopped)
			r.reason = "removed from the config"
		}
		w.items = append(w.items, &waitItem{r: r, goal: goalStopped, gen: r.cur.gen, pid: r.cur.pid, verb: "stopped: removed from the config"})
	}
	outside := s.outside(cfg)
	for _, name := range cfg.Names {
		if r, ok := s.byName[name]; ok {
			r.p = cfg.Processes[name]
			continue
		}
		r := newRecord(cfg.Processes[name], len(s.recs))
		r.op.after = stopping
		s.recs = append(s.recs, r)
		s.byName[name] = r
		if outside[name] {
			s.leaveOutside(r)
			w.done(r, true, "added to the config; not started: "+reasonOutside)
			continue
		}
		w.items = append(w.items, &waitItem{r: r, goal: goalUp, verb: "started: added to the config"})
	}
	s.relink()
	s.sorted = nil             // publish's name order includes the added records
	s.tl.ReconfiguredFrom(cfg) // before any added process starts
	for _, st := range plan.Steps {
		if st.Action != PlanRestart {
			continue
		}
		r := s.byName[st.Name]
		r.op.after = stopping
		w.items = append(w.items, &waitItem{r: r, goal: goalUp, gen: r.cur.gen, pid: r.cur.pid, verb: "restarted: " + st.Why})
		if r.cur.child == nil && r.state == Completed { // a completed oneshot that is a service now
			s.setState(r, Pending)
			r.reason = ""
		}
		if s.canOverlap(r) {
			s.beginOverlap(r, "restarting: "+st.Why, now)
			continue
		}
		if r.cur.child != nil && r.state != Stopping && r.wantStop == intentNone {
			s.requestStop(r, intentRestart, now)
		}
	}
	s.stepWantedStops(now)
	s.cfg = cfg
	s.ops.generation++
	w.resp.Generation = s.ops.generation
	s.observeReload("applied")
	s.log.Info("config reloaded", "generation", s.ops.generation, "changes", len(plan.Steps), "unchanged", plan.Unchanged)
	for _, l := range plan.Lines() {
		s.log.Info("reload: " + l)
	}
	if s.ops.onReload != nil {
		s.ops.onReload(cfg)
	}
}

// relink rebuilds every record's dependency links from its definition.
// Records removed by a reload keep their links to what they depended on
// (their dependencies must outlive them) until they are gone.
func (s *Supervisor) relink() {
	byName := make(map[string]*record, len(s.recs))
	for _, r := range s.recs {
		if r.op.gone {
			if _, ok := byName[r.p.Name]; !ok {
				byName[r.p.Name] = r
			}
		}
	}
	for name, r := range s.byName {
		byName[name] = r
	}
	for _, r := range s.recs {
		r.deps, r.dependents, r.restartDeps = r.deps[:0], nil, nil
	}
	for _, r := range s.recs {
		if r.op.gone && r.cur.child == nil && r.cur.lingering == nil {
			continue // stopped for good: links nothing
		}
		for _, d := range r.p.DependsOn {
			dr, ok := byName[d.Name]
			if !ok {
				continue
			}
			r.deps = append(r.deps, dep{idx: dr.idx, cond: d.Condition, restart: d.Restart})
			dr.dependents = append(dr.dependents, r.idx)
			if d.Restart {
				dr.restartDeps = append(dr.restartDeps, r.idx)
			}
		}
	}
}
