package config

import (
	"fmt"
	"slices"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"
)

// RuleAction is what an exit rule does with the exit it matches.
type RuleAction uint8

const (
	RuleRestart    RuleAction = iota // restart with backoff, whatever the policy says
	RuleStop                         // stay stopped: no restart, not a failure of the run
	RuleRestartAll                   // stop every process at once and start them all again
	RuleShutdown                     // end podvisor with the process's exit code
)

var ruleActionWords = []string{"restart", "stop", "restart-all", "shutdown"}

func (a RuleAction) String() string {
	if int(a) < len(ruleActionWords) {
		return ruleActionWords[a]
	}
	return "unknown"
}

var (
	ruleKeys     = []string{"exit_codes", "signals", "action"}
	exitCodeKeys = []string{"in", "not_in"}
)

// ExitRule is one entry of restart.rules. It matches an exit whose code
// (128+N for a death by signal N, as everywhere in podvisor) is in In, or
// not in NotIn, or a death by one of Signals; the first rule that matches
// decides, and with none the restart policy does.
type ExitRule struct {
	Pos     Pos
	In      []int // nil: exit_codes.in not given
	NotIn   []int // nil: exit_codes.not_in not given
	Signals []syscall.Signal
	Action  RuleAction
}

// Matches reports whether the rule matches an exit with code, or a death by
// signal sig (0 for a normal exit; code is then 128+sig).
func (r *ExitRule) Matches(code int, sig syscall.Signal) bool {
	switch {
	case r.In != nil && slices.Contains(r.In, code):
		return true
	case r.NotIn != nil && !slices.Contains(r.NotIn, code):
		return true
	case sig != 0 && slices.Contains(r.Signals, sig):
		return true
	}
	return false
}

// Label names the rule in logs, /status and metrics: "rule 2 (shutdown)".
func (r *ExitRule) Label(i int) string {
	return fmt.Sprintf("rule %d (%s)", i+1, r.Action)
}

// Rule returns the index of the first rule matching the exit, or -1.
func (p *Process) Rule(code int, sig syscall.Signal) int {
	for i := range p.Restart.Rules {
		if p.Restart.Rules[i].Matches(code, sig) {
			return i
		}
	}
	return -1
}

// exitEvents is every exit a process can have: a code 0-255 (index = code)
// or a death by signal 1-64 (index 255+N), whose code is 128+N.
const exitEvents = 256 + 64

func (r *ExitRule) matchSet() (set [exitEvents]bool) {
	for e := range set {
		code, sig := e, syscall.Signal(0)
		if e > 255 {
			sig = syscall.Signal(e - 255)
			code = 128 + int(sig)
		}
		set[e] = r.Matches(code, sig)
	}
	return set
}

func (l *loader) exitRules(n *yaml.Node, path *keyPath) []ExitRule {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "expected a list of rules, got %s", describe(n))
		return nil
	}
	var (
		rules   []ExitRule
		covered [exitEvents]bool // what earlier rules already match
	)
	for i, item := range n.Content {
		ipath := path.elem(i)
		r, ok := l.exitRule(item, ipath)
		if !ok {
			continue
		}
		set := r.matchSet()
		live, some := false, false
		for e := range set {
			some = some || set[e]
			if set[e] && !covered[e] {
				live = true
				covered[e] = true
			}
		}
		switch {
		case !some:
			l.errorf(item, ipath, "this rule can never match: no exit code or signal satisfies it").Hint =
				"not_in that lists every code 0-255 leaves nothing to match"
		case !live:
			l.errorf(item, ipath, "this rule can never match: the rules before it match every exit it would").Hint =
				"first match wins: move it up or narrow the earlier rules"
		}
		rules = append(rules, r)
	}
	return rules
}

func (l *loader) exitRule(n *yaml.Node, path *keyPath) (ExitRule, bool) {
	r := ExitRule{Pos: l.pos(n)}
	f, ok := l.fields(n, path, ruleKeys)
	if !ok {
		return r, false
	}
	good := true
	v, hasCodes := f.get("exit_codes")
	if hasCodes {
		good = l.ruleCodes(v.val, path.field("exit_codes"), &r) && good
	}
	s, hasSigs := f.get("signals")
	if hasSigs {
		good = l.ruleSignals(s.val, path.field("signals"), &r) && good
	}
	if !hasCodes && !hasSigs {
		l.errorf(n, path, "a rule needs exit_codes or signals").Hint = "a catch-all is the restart policy itself"
		good = false
	}
	if a, ok := f.get("action"); ok {
		w, ok := l.word(a.val, path.field("action"), "rule action", ruleActionWords)
		good = good && ok
		r.Action = RuleAction(slices.Index(ruleActionWords, w))
	} else {
		l.errorf(n, path, "action is required").Hint = "valid: " + strings.Join(ruleActionWords, ", ")
		good = false
	}
	return r, good
}

func (l *loader) ruleCodes(n *yaml.Node, path *keyPath, r *ExitRule) bool {
	f, ok := l.fields(n, path, exitCodeKeys)
	if !ok {
		return false
	}
	in, hasIn := f.get("in")
	notIn, hasNotIn := f.get("not_in")
	switch {
	case hasIn && hasNotIn:
		l.errorf(notIn.key, path, "give in or not_in, not both").Hint = "split them into two rules"
		return false
	case hasIn:
		r.In = l.ruleCodeList(in.val, path.field("in"))
		return r.In != nil
	case hasNotIn:
		r.NotIn = l.ruleCodeList(notIn.val, path.field("not_in"))
		return r.NotIn != nil
	}
	l.errorf(n, path, "exit_codes needs in or not_in")
	return false
}

// ruleCodeList reads a non-empty list of exit codes; nil after an error.
func (l *loader) ruleCodeList(n *yaml.Node, path *keyPath) []int {
	before := len(l.errs)
	codes := l.exitCodes(n, path)
	if len(l.errs) > before {
		return nil
	}
	return codes
}

func (l *loader) ruleSignals(n *yaml.Node, path *keyPath, r *ExitRule) bool {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		l.errorf(n, path, "expected a non-empty list of signal names, got %s", describe(n))
		return false
	}
	good := true
	for i, c := range n.Content {
		s, ok := l.str(c, path.elem(i))
		if !ok {
			good = false
			continue
		}
		name := strings.ToUpper(strings.TrimSpace(s))
		if !strings.HasPrefix(name, "SIG") {
			name = "SIG" + name
		}
		sig := unix.SignalNum(name)
		if sig == 0 {
			l.errorf(c, path.elem(i), "unknown signal %q", s).Hint = "use a name such as TERM, KILL, SEGV"
			good = false
			continue
		}
		r.Signals = append(r.Signals, sig)
	}
	return good
}
