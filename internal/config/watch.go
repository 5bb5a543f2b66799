package config

import (
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
)

var (
	watchKeys        = []string{"paths", "ignore", "debounce", "cascade", "action"}
	defaultDebounce  = 300 * time.Millisecond
	watchActionHint  = `restart, or "signal NAME" such as "signal HUP"`
	maxWatchPatterns = 64
)

// Watch is `watch:` on a process: file changes matching Paths (and no
// Ignore pattern), quiet for Debounce, restart it or send it a signal.
type Watch struct {
	Paths    []string // absolute glob patterns (filepath.Match), relative ones resolved against the config's directory
	Ignore   []string // base-name or absolute glob patterns
	Debounce time.Duration
	Cascade  bool           // restart: also its restart: true dependents, in order (else it alone)
	Signal   syscall.Signal // 0: action restart
}

func (l *loader) watch(n *yaml.Node, path *keyPath) *Watch {
	f, ok := l.fields(n, path, watchKeys)
	if !ok {
		return nil
	}
	w := &Watch{Debounce: defaultDebounce, Cascade: true}
	good := true
	if v, ok := f.get("paths"); ok {
		w.Paths, good = l.globs(v.val, path.field("paths"), true)
	} else {
		l.errorf(n, path, "paths is required").Hint = `list globs such as paths: ["src/*.go"]`
		return nil
	}
	if v, ok := f.get("ignore"); ok {
		var g bool
		w.Ignore, g = l.globs(v.val, path.field("ignore"), false)
		good = good && g
	}
	if v, ok := f.get("debounce"); ok {
		w.Debounce, _ = l.duration(v.val, path.field("debounce"), false)
	}
	if v, ok := f.get("cascade"); ok {
		if v.val.ShortTag() != "!!bool" {
			l.errorf(v.val, path.field("cascade"), "expected true or false, got %s", describe(v.val))
			good = false
		} else {
			w.Cascade = v.val.Value == "true"
		}
	}
	if v, ok := f.get("action"); ok {
		s, ok := l.str(v.val, path.field("action"))
		switch {
		case !ok:
			good = false
		case s == "restart":
		case strings.HasPrefix(s, "signal "):
			sig, msg, hint := parseStopSignal(strings.TrimPrefix(s, "signal "))
			if msg != "" {
				l.errorf(v.val, path.field("action"), "%s", msg).Hint = hint
				good = false
			}
			w.Signal = sig
		default:
			l.errorf(v.val, path.field("action"), "unknown watch action %q", s).Hint = watchActionHint
			good = false
		}
	}
	if !good {
		return nil
	}
	return w
}

// globs reads a non-empty list of glob patterns; abs resolves relative
// ones against the config's directory.
func (l *loader) globs(n *yaml.Node, path *keyPath, abs bool) ([]string, bool) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 || len(n.Content) > maxWatchPatterns {
		l.errorf(n, path, "expected a list of 1-%d glob patterns, got %s", maxWatchPatterns, describe(n))
		return nil, false
	}
	var out []string
	good := true
	for i, c := range n.Content {
		s, ok := l.str(c, path.elem(i))
		if !ok {
			good = false
			continue
		}
		if s, ok = l.interp(c, path.elem(i), s); !ok {
			good = false
			continue
		}
		if abs && !filepath.IsAbs(s) {
			s = filepath.Join(l.dir, s)
		}
		if _, err := filepath.Match(s, ""); err != nil || s == "" {
			l.errorf(c, path.elem(i), "invalid glob pattern %q", s).Hint = "filepath.Match syntax: *, ?, [a-z]; ** is not special"
			good = false
			continue
		}
		if abs && strings.ContainsAny(filepath.Dir(s), "*?[") {
			l.errorf(c, path.elem(i), "pattern %q has a wildcard in a directory", s).Hint = "only the last element may have wildcards: list each directory"
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}
