// File watching (`watch:` on a process): an fsnotify watcher per process
// watches the directories of its patterns; a change that matches a pattern
// and no ignore pattern, followed by debounce of quiet, is told to the
// supervisor, which restarts or signals the process (supervisor/filewatch.go).

package launch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// FileWatcher is the supervisor's Watcher: an fsnotify watcher per process
// with watch:, following the symlinks and directories fileWatch describes.
type FileWatcher struct {
	Log *slog.Logger
}

var _ supervisor.Watcher = FileWatcher{}

// Watch starts watching spec's paths for process, calling changed from
// its own goroutine with one changed file after each quiet period of
// spec.Debounce, until ctx is done. A watcher that cannot start is a
// warning naming the limit, not a failure of the run.
func (fwr FileWatcher) Watch(ctx context.Context, process string, spec *config.Watch, changed func(file string)) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		fwr.Log.Warn("watch: cannot start: "+inotifyHint(err), "process", process, "err", err)
		return
	}
	fw := newFileWatch(w, process, spec, fwr.Log)
	fw.sync(true)
	go fw.run(ctx, changed)
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

// fileWatch is the state of one process's watcher, owned by its runWatcher
// goroutine. inotify watches directories by inode, so two things escape a
// plain watch of each pattern's directory, and fileWatch follows both:
//
//   - A matching path that is a symlink changes when what it resolves to
//     changes: the kubelet updates a ConfigMap or Secret volume by making
//     a new timestamped directory and renaming a `..data_tmp` symlink over
//     `..data` (key -> ..data/key -> ..2026_.../key); no event names the key.
//     So each symlinked match is resolved (links), the directory of its
//     target is watched too, and any create, remove or rename is followed by
//     a check of what each link resolves to (a write changes no name).
//   - A watched directory removed (or renamed away) takes its watch with
//     it. It is then missing: podvisor says so, watches its nearest
//     existing ancestor instead, and watches it again once it is back.
type fileWatch struct {
	w    *fsnotify.Watcher
	name string // the process, for the log
	spec *config.Watch
	log  *slog.Logger

	dirs    []string          // the patterns' directories
	missing map[string]bool   // pattern directories gone since they were watched
	links   map[string]string // symlinked match -> the path it resolves to
	failed  map[string]bool   // directories a watch was refused for (warned once)

	glob func(pattern string) ([]string, error) // filepath.Glob; tests count the calls
}

func newFileWatch(w *fsnotify.Watcher, name string, spec *config.Watch, log *slog.Logger) *fileWatch {
	fw := &fileWatch{w: w, name: name, spec: spec, log: log,
		missing: map[string]bool{}, links: map[string]string{}, failed: map[string]bool{}, glob: filepath.Glob}
	seen := map[string]bool{}
	for _, pat := range spec.Paths {
		if dir := filepath.Dir(pat); !seen[dir] {
			seen[dir] = true
			fw.dirs = append(fw.dirs, dir)
		}
	}
	fw.resolveLinks()
	return fw
}

// resolveLinks reads what every symlinked match resolves to now, and
// returns the matches whose resolution changed (appeared, went, or points
// elsewhere).
func (fw *fileWatch) resolveLinks() []string {
	now := map[string]string{}
	for _, pat := range fw.spec.Paths {
		matches, _ := fw.glob(pat)
		for _, m := range matches {
			if fi, err := os.Lstat(m); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				continue
			}
			t, err := filepath.EvalSymlinks(m)
			if err != nil {
				t = "" // dangling: a change when it resolves again
			}
			now[m] = t
		}
	}
	var changed []string
	for m, t := range now {
		if old, ok := fw.links[m]; !ok || old != t {
			changed = append(changed, m)
		}
	}
	for m := range fw.links {
		if _, ok := now[m]; !ok {
			changed = append(changed, m)
		}
	}
	fw.links = now
	return changed
}

// linkOf returns the symlinked match that resolves to target, if any.
func (fw *fileWatch) linkOf(target string) (string, bool) {
	for m, t := range fw.links {
		if t == target && t != "" {
			return m, true
		}
	}
	return "", false
}

// sync brings the watched directories in line with what should be watched:
// each pattern directory that exists, the nearest existing ancestor of each
// that is missing, and the directory of each link's target. It returns the
// pattern directories that came back (watched again after being missing).
// initial is the first call: a directory absent then was never watched.
func (fw *fileWatch) sync(initial bool) []string {
	back, raced := fw.syncOnce(initial)
	if raced {
		// A missing directory was made again before its ancestor's watch
		// was in place: no event will say so, so look once more.
		more, _ := fw.syncOnce(false)
		back = append(back, more...)
	}
	return back
}

// syncOnce is one pass of sync; raced reports a missing directory that
// exists once the watches are in place.
func (fw *fileWatch) syncOnce(initial bool) (back []string, raced bool) {
	watched := map[string]bool{}
	for _, d := range fw.w.WatchList() {
		watched[d] = true
	}
	want := map[string]bool{}
	var gone []string // newly missing: said once their ancestors are watched
	for _, dir := range fw.dirs {
		if isDir(dir) {
			if !watched[dir] {
				if err := fw.w.Add(dir); err != nil {
					fw.refused(dir, err)
					continue
				}
				watched[dir] = true
				if fw.missing[dir] {
					delete(fw.missing, dir)
					fw.log.Info("watch: directory is back; watching it again", "process", fw.name, "dir", dir)
					back = append(back, dir)
				}
			}
			want[dir] = true
			continue
		}
		if !fw.missing[dir] {
			fw.missing[dir] = true
			gone = append(gone, dir)
		}
		if anc := existingAncestor(dir); anc != "" {
			want[anc] = true
		}
	}
	for _, t := range fw.links {
		if t != "" {
			want[filepath.Dir(t)] = true
		}
	}
	for d := range want {
		if !watched[d] {
			if err := fw.w.Add(d); err != nil {
				fw.refused(d, err)
			}
		}
	}
	for d := range watched {
		if !want[d] {
			_ = fw.w.Remove(d) // may be gone already
		}
	}
	for _, dir := range gone {
		if initial {
			fw.log.Warn("watch: directory does not exist; watching its parent until it is made", "process", fw.name, "dir", dir)
		} else {
			fw.log.Warn("watch: directory removed; watching its parent until it is made again", "process", fw.name, "dir", dir)
		}
	}
	for dir := range fw.missing {
		if isDir(dir) {
			raced = true
		}
	}
	return back, raced
}

// refused warns, once per directory, that a watch was refused.
func (fw *fileWatch) refused(dir string, err error) {
	if !fw.failed[dir] {
		fw.failed[dir] = true
		fw.log.Warn("watch: cannot watch "+dir+": "+inotifyHint(err), "process", fw.name, "err", err)
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// existingAncestor returns the nearest ancestor of dir that is a directory.
func existingAncestor(dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		if isDir(parent) {
			return parent
		}
		dir = parent
	}
}

// changes returns the matching files that ev says changed, and, for an
// event that changes names, updates the links and what is watched.
func (fw *fileWatch) changes(ev fsnotify.Event) []string {
	var out []string
	direct := watchMatches(fw.spec, ev.Name)
	if direct {
		out = append(out, ev.Name)
	} else if m, ok := fw.linkOf(ev.Name); ok && watchMatches(fw.spec, m) {
		out = append(out, m) // written through the link
	}
	// Only a name made, removed or renamed can change what a link resolves
	// to or whether a directory is there; a write (a log file in a watched
	// directory, many a second) must not cost a glob of every pattern.
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
		return out
	}
	for _, m := range fw.resolveLinks() {
		if watchMatches(fw.spec, m) {
			out = append(out, m)
		}
	}
	for _, dir := range fw.sync(false) {
		// Whatever was made in it before the watch was back is a change.
		for _, pat := range fw.spec.Paths {
			if filepath.Dir(pat) != dir {
				continue
			}
			matches, _ := fw.glob(pat)
			for _, m := range matches {
				if watchMatches(fw.spec, m) {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// run turns matching file events into one call of changed per quiet period.
func (fw *fileWatch) run(ctx context.Context, changed func(file string)) {
	defer fw.w.Close()
	var quiet <-chan time.Time
	var timer *time.Timer
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-fw.w.Errors:
			if !ok {
				return
			}
			fw.log.Warn("watch: "+inotifyHint(err), "process", fw.name, "err", err)
		case ev, ok := <-fw.w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			files := fw.changes(ev)
			if len(files) == 0 {
				continue
			}
			last = files[0]
			if timer == nil {
				timer = time.NewTimer(fw.spec.Debounce)
			} else {
				timer.Reset(fw.spec.Debounce)
			}
			quiet = timer.C
		case <-quiet:
			quiet = nil
			changed(last)
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
