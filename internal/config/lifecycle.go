package config

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// restart decodes the short form (a policy word) or the long form.
func (l *loader) restart(n *yaml.Node, path *keyPath, t Type) Restart {
	r := defaultRestart(t)
	if n.Kind == yaml.ScalarNode {
		r.Policy = l.policy(n, path, t)
		return r
	}
	f, ok := l.fields(n, path, restartKeys)
	if !ok {
		return r
	}
	if v, ok := f.get("policy"); ok {
		r.Policy = l.policy(v.val, path.field("policy"), t)
	}
	if v, ok := f.get("backoff"); ok {
		r.Backoff, _ = l.duration(v.val, path.field("backoff"), true)
	}
	if v, ok := f.get("max_backoff"); ok {
		r.MaxBackoff, _ = l.duration(v.val, path.field("max_backoff"), true)
	} else if r.Backoff > r.MaxBackoff {
		// A default must never make an explicit value invalid: without
		// max_backoff, a long backoff is its own ceiling.
		r.MaxBackoff = r.Backoff
	}
	if v, ok := f.get("limit"); ok {
		if r.Limit, ok = l.integer(v.val, path.field("limit")); ok && r.Limit < 0 {
			l.errorf(v.val, path.field("limit"), "limit must not be negative").Hint = "0 means unlimited"
		}
	}
	if v, ok := f.get("overlap"); ok {
		if r.Overlap, ok = l.boolean(v.val, path.field("overlap")); ok && r.Overlap && t != Service {
			l.errorf(v.val, path.field("overlap"), "overlap applies to services only")
		}
	}
	if v, ok := f.get("during_termination"); ok {
		r.DuringTermination, _ = l.boolean(v.val, path.field("during_termination"))
	}
	if v, ok := f.get("rules"); ok {
		r.Rules = l.exitRules(v.val, path.field("rules"))
	}
	if r.Backoff > 0 && r.MaxBackoff > 0 && r.MaxBackoff < r.Backoff {
		at := n
		if v, ok := f.get("max_backoff"); ok {
			at = v.val
		}
		l.errorf(at, path.field("max_backoff"), "max_backoff %s is less than backoff %s",
			formatDuration(r.MaxBackoff), formatDuration(r.Backoff))
	}
	return r
}

// policy reads a restart policy word. always is refused for oneshots and
// jobs: they are meant to finish, and always would run them again after a
// success.
func (l *loader) policy(n *yaml.Node, path *keyPath, t Type) Policy {
	w, ok := l.word(n, path, "restart policy", policyWords)
	if !ok {
		return defaultPolicy(t)
	}
	p := Policy(slices.Index(policyWords, w))
	if p == Always && t != Service {
		l.errorf(n, path, "restart policy always is only for services, not a %s", t).Hint =
			"use on-failure to retry a failing " + t.String()
	}
	return p
}

func (l *loader) exitCodes(n *yaml.Node, path *keyPath) []int {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "expected a list of exit codes, got %s", describe(n))
		return defaultSuccessExitCodes()
	}
	if len(n.Content) == 0 {
		l.errorf(n, path, "list at least one exit code")
		return defaultSuccessExitCodes()
	}
	codes := make([]int, 0, len(n.Content))
	for i, c := range n.Content {
		v, ok := l.integer(c, path.elem(i))
		if !ok {
			continue
		}
		if v < 0 || v > 255 {
			l.errorf(c, path.elem(i), "exit code %d is out of range 0-255", v)
			continue
		}
		codes = append(codes, v)
	}
	return codes
}

func (l *loader) stop(n *yaml.Node, path *keyPath) Stop {
	s := defaultStop()
	f, ok := l.fields(n, path, stopKeys)
	if !ok {
		return s
	}
	if v, ok := f.get("signal"); ok {
		if name, ok := l.str(v.val, path.field("signal")); ok {
			sig, msg, hint := parseStopSignal(name)
			if msg != "" {
				l.errorf(v.val, path.field("signal"), "%s", msg).Hint = hint
			} else {
				s.Signal = sig
			}
		}
	}
	if v, ok := f.get("timeout"); ok {
		// 0s is allowed: SIGKILL follows the stop signal at once.
		s.Timeout, _ = l.duration(v.val, path.field("timeout"), false)
	}
	if v, ok := f.get("command"); ok {
		s.Command, s.Shell, _ = l.command(v.val, path.field("command"))
	}
	if v, ok := f.get("command_first"); ok {
		s.CommandFirst, _ = l.boolean(v.val, path.field("command_first"))
	}
	if v, ok := f.get("min_grace"); ok {
		s.MinGrace, _ = l.duration(v.val, path.field("min_grace"), false)
	}
	return s
}

// remainAfterExit reads remain_after_exit: only a service that a success
// exit does not restart can stay `completed` after one.
func (l *loader) remainAfterExit(n *yaml.Node, path *keyPath, p *Process) bool {
	on, ok := l.boolean(n, path)
	switch {
	case !ok || !on:
		return false
	case p.Type != Service:
		l.errorf(n, path, "remain_after_exit is for a service, not a %s", p.Type).Hint =
			"a oneshot counts as ready once completed already; a job's success ends the run"
		return false
	case p.Restart.Policy == Always:
		l.errorf(n, path, "remain_after_exit with restart policy always has no effect: every exit is restarted").Hint =
			"add restart: never (or on-failure)"
		return false
	}
	return true
}
