// File watching (`watch:` on a process): an fsnotify watcher per process
// watches the directories of its patterns; a change that matches a pattern
// and no ignore pattern, followed by debounce of quiet, restarts the
// process (with cascade: every dependent too, transitively; restart: true
// dependents follow in any case) or sends it a signal. The watchers run for
// the processes of the config podvisor started with.

package supervisor

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/podvisor/podvisor/internal/config"
)

// watchEv says the files of a process's watch changed (after the debounce).
type watchEv struct {
	idx  int
	name string // tests: the process by name, resolved in the loop (idx unused)
	file string // one of the changed files, for the log
}

func (watchEv) isEvent() {}

// startWatchers starts a watcher for each process with watch:. A watcher
// that cannot start is a warning naming the limit, not a failure of the run.
func (s *Supervisor) startWatchers(ctx context.Context) {
	if s.noWatchers {
		return
	}
	for _, r := range s.recs {
		if r.p.Watch == nil {
			continue
		}
		w, err := fsnotify.NewWatcher()
		if err != nil {
			s.log.Warn("watch: cannot start: "+inotifyHint(err), "process", r.p.Name, "err", err)
			continue
		}
		dirs := map[string]bool{}
		for _, pat := range r.p.Watch.Paths {
			dir := filepath.Dir(pat)
			if dirs[dir] {
				continue
			}
			dirs[dir] = true
			if err := w.Add(dir); err != nil {
				s.log.Warn("watch: cannot watch "+dir+": "+inotifyHint(err), "process", r.p.Name, "err", err)
			}
		}
		go s.runWatcher(ctx, w, r.idx, r.p.Watch)
	}
}

// inotifyHint names the kernel limit an inotify error hit, if any.
func inotifyHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "inotify watch limit reached: raise fs.inotify.max_user_watches (sysctl)"
	case errors.Is(err, syscall.EMFILE):
		return "inotify instance limit reached: raise fs.inotify.max_user_instances (sysctl)"
	}
	return "not watched"
}

// runWatcher turns matching file events into one watchEv per quiet period.
func (s *Supervisor) runWatcher(ctx context.Context, w *fsnotify.Watcher, idx int, spec *config.Watch) {
	defer w.Close()
	var quiet <-chan time.Time
	var timer *time.Timer
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("watch: "+inotifyHint(err), "err", err)
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || !watchMatches(spec, ev.Name) {
				continue
			}
			last = ev.Name
			if timer == nil {
				timer = time.NewTimer(spec.Debounce)
			} else {
				timer.Reset(spec.Debounce)
			}
			quiet = timer.C
		case <-quiet:
			quiet = nil
			s.send(watchEv{idx: idx, file: last})
		}
	}
}

// watchMatches reports whether file is one of spec's paths and none of its
// ignores (an ignore pattern matches the base name or the whole path).
func watchMatches(spec *config.Watch, file string) bool {
	for _, ig := range spec.Ignore {
		if ok, _ := filepath.Match(ig, filepath.Base(file)); ok {
			return false
		}
		if ok, _ := filepath.Match(ig, file); ok {
			return false
		}
	}
	for _, pat := range spec.Paths {
		if ok, _ := filepath.Match(pat, file); ok {
			return true
		}
	}
	return false
}

// onWatch carries out a watch's action in the loop.
func (s *Supervisor) onWatch(e watchEv, now time.Time) {
	r := s.recs[e.idx]
	if e.name != "" {
		if r = s.byName[e.name]; r == nil {
			return
		}
	}
	if r.gone || r.held || s.phase == PhaseStopping || r.p.Watch == nil {
		return
	}
	r.watchEvents++
	if sig := r.p.Watch.Signal; sig != 0 {
		if r.child == nil {
			return
		}
		s.log.Info("files changed: signalling", "process", r.p.Name, "file", e.file, "signal", sig.String())
		if err := r.child.Signal(sig); err != nil {
			s.log.Warn("watch signal", "process", r.p.Name, "err", err)
		}
		return
	}
	targets := []*record{r}
	if r.p.Watch.Cascade {
		targets = append(targets, s.dependentsClosure(r)...)
	}
	s.log.Info("files changed: restarting", "process", r.p.Name, "file", e.file, "cascade", r.p.Watch.Cascade)
	for _, x := range targets {
		switch {
		case x.held || x.gone:
		case x.child != nil && x.state != Stopping:
			x.reason = "restarting: files changed (" + r.p.Name + ")"
			s.requestStop(x, intentRestart, now)
		case x.child == nil && (x.state == Completed || x.state == Stopped || x.state == Failed) && x.p.Schedule == nil:
			s.setState(x, Pending) // a finished oneshot or a stopped service runs again
			x.reason = "restarting: files changed (" + r.p.Name + ")"
		}
	}
}
