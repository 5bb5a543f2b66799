package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// loader walks one parsed document and collects every problem it finds.
type loader struct {
	file   string
	dir    string
	lookup func(string) (string, bool)
	errs   []*Error

	envFiles map[string]envFileResult // by absolute path: read each file once
	users    map[string]userResult    // by spec: look each user up once

	logDefaults    Output                // the top-level log keys, for every process
	badLogDefaults bool                  // they had an error: do not report it again per process
	logNodes       map[string]*yaml.Node // each process's log mapping, for errors across processes

	// portable (ParsePortable) turns host-dependent problems into notes.
	portable   bool
	notes      []*Error
	interpNode *yaml.Node // the value being interpolated, for notes
	interpPath *keyPath
}

type envFileResult struct {
	entries []string
	err     error
}

type userResult struct {
	user *User
	err  error
}

// errorf records an error at n and returns it so the caller can add a Hint.
func (l *loader) errorf(n *yaml.Node, path *keyPath, format string, args ...any) *Error {
	e := &Error{Pos: l.pos(n), Path: path.String(), Msg: fmt.Sprintf(format, args...)}
	l.errs = append(l.errs, e)
	return e
}

func (l *loader) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: l.file}
	}
	return Pos{File: l.file, Line: n.Line, Col: n.Column}
}

// describe names what n holds in user terms, never in YAML tag jargon.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	switch n.ShortTag() {
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "an empty value"
	case "!!timestamp":
		return "a date"
	case "!!binary":
		return "binary data"
	}
	if t := n.ShortTag(); !strings.HasPrefix(t, "!!") {
		return "a value tagged " + t // a tag the user wrote, such as !env
	}
	return "a value of an unsupported type"
}

// pair is one key and value of a mapping.
type pair struct {
	name string
	key  *yaml.Node
	val  *yaml.Node
}

// mapping returns the entries of n, reporting a node that is not a mapping,
// keys that are not scalars, and duplicate keys (yaml.v3 does not reject those
// when decoding into a yaml.Node).
func (l *loader) mapping(n *yaml.Node, path *keyPath) ([]pair, bool) {
	if n.Kind != yaml.MappingNode {
		l.errorf(n, path, "expected a mapping, got %s", describe(n))
		return nil, false
	}
	pairs := make([]pair, 0, len(n.Content)/2)
	var seen map[string]*yaml.Node
	if len(n.Content) > 16 {
		seen = make(map[string]*yaml.Node, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, path, "expected a string key, got %s", describe(k))
			continue
		}
		if first := findKey(seen, pairs, k.Value); first != nil {
			l.errorf(k, path, "duplicate key %q (first defined at line %d)", k.Value, first.Line)
			continue
		}
		if seen != nil {
			seen[k.Value] = k
		}
		pairs = append(pairs, pair{name: k.Value, key: k, val: v})
	}
	return pairs, true
}

// findKey looks name up in seen, or scans pairs when the mapping is small
// enough that a map would cost more than it saves.
func findKey(seen map[string]*yaml.Node, pairs []pair, name string) *yaml.Node {
	if seen != nil {
		return seen[name]
	}
	for _, p := range pairs {
		if p.name == name {
			return p.key
		}
	}
	return nil
}

// fields checks the keys of mapping n against known and returns the known
// ones. Unknown keys are reported with a did-you-mean hint.
func (l *loader) fields(n *yaml.Node, path *keyPath, known []string) (fieldSet, bool) {
	pairs, ok := l.mapping(n, path)
	if !ok {
		return nil, false
	}
	out := pairs[:0]
	for _, p := range pairs {
		if !contains(known, p.name) {
			l.errorf(p.key, path, "unknown key %q", p.name).Hint = unknownKeyHint(p.name, known)
			continue
		}
		out = append(out, p)
	}
	return out, true
}

// fieldSet is the known entries of a mapping. A linear scan beats a map at
// the dozen keys a mapping in this schema has.
type fieldSet []pair

func (f fieldSet) get(name string) (pair, bool) {
	for _, p := range f {
		if p.name == name {
			return p, true
		}
	}
	return pair{}, false
}

func unknownKeyHint(name string, known []string) string {
	if h := didYouMean(name, known); h != "" {
		return h
	}
	return "valid keys: " + strings.Join(known, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyPath is a location in the document such as processes.app.command[0].
// It is a list linked towards the root, built on the stack as the walk
// descends and turned into a string only when an error is reported, so a
// valid config costs no path allocations. nil is the document itself.
type keyPath struct {
	up     *keyPath
	key    string
	idx    int
	isElem bool // idx, not key, names this level
}

func top(key string) *keyPath { return &keyPath{key: key} }

func (p *keyPath) field(key string) *keyPath { return &keyPath{up: p, key: key} }

func (p *keyPath) elem(i int) *keyPath { return &keyPath{up: p, idx: i, isElem: true} }

// String formats p. Paths are a few levels deep, so it simply walks from p
// to each level in turn, root first. It keeps no pointer to any node, which
// lets escape analysis leave the nodes on the callers' stacks.
func (p *keyPath) String() string {
	depth := 0
	for q := p; q != nil; q = q.up {
		depth++
	}
	var b strings.Builder
	for i := depth - 1; i >= 0; i-- {
		q := p
		for range i {
			q = q.up
		}
		if q.isElem {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(q.idx))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(q.key)
	}
	return b.String()
}

// str returns the value of a string scalar. Numbers and booleans are refused:
// where a string is expected, they are usually a mistake.
func (l *loader) str(n *yaml.Node, path *keyPath) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		l.errorf(n, path, "expected a string, got %s", describe(n))
		return "", false
	}
	return l.noNUL(n, path, n.Value)
}

// text returns a scalar's text as written. Numbers, booleans and dates are
// accepted, as in `env: {PORT: 8080}` or `command: [sleep, 10]`.
func (l *loader) text(n *yaml.Node, path *keyPath) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
			return l.noNUL(n, path, n.Value)
		}
	}
	l.errorf(n, path, "expected a string, got %s", describe(n))
	return "", false
}

// noNUL rejects NUL bytes (possible via "\0" in YAML): no argv or environment
// entry can carry one.
func (l *loader) noNUL(n *yaml.Node, path *keyPath, s string) (string, bool) {
	if strings.IndexByte(s, 0) >= 0 {
		l.errorf(n, path, "contains a NUL character")
		return "", false
	}
	return s, true
}

// interp interpolates s (the value of n) and reports a failure at n.
func (l *loader) interp(n *yaml.Node, path *keyPath, s string) (string, bool) {
	l.interpNode, l.interpPath = n, path
	v, err := interpolate(s, l.lookup)
	var unset *unsetError
	switch {
	case errors.As(err, &unset):
		l.errorf(n, path, "variable %s is not set", unset.name).Hint = unset.hint()
		return "", false
	case err != nil:
		l.errorf(n, path, "%s", err.Error())
		return "", false
	}
	return v, true
}

func (l *loader) integer(n *yaml.Node, path *keyPath) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		l.errorf(n, path, "expected a whole number, got %s", describe(n))
		return 0, false
	}
	var v int32
	if err := n.Decode(&v); err != nil {
		l.errorf(n, path, "number %s is out of range", n.Value)
		return 0, false
	}
	return int(v), true
}

func (l *loader) boolean(n *yaml.Node, path *keyPath) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		l.errorf(n, path, "expected true or false, got %s", describe(n))
		return false, false
	}
	return v, true
}

// MaxDuration caps every duration in a config: anything longer is a mistake
// (a unit slip such as 100h for 100s), not a plan.
const MaxDuration = 24 * time.Hour

// durationSyntax matches what time.ParseDuration accepts, so that a string
// it matches but ParseDuration refuses can be reported as out of range.
var durationSyntax = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)
})

// duration parses a Go duration with a unit (bare 0 is accepted too). It
// rejects negative values, values above MaxDuration, and zero if positive is
// set.
func (l *loader) duration(n *yaml.Node, path *keyPath, positive bool) (time.Duration, bool) {
	const hint = "use a number with a unit: ns, us, ms, s, m or h, e.g. 10s or 1m30s"
	if n.Kind != yaml.ScalarNode {
		l.errorf(n, path, "expected a duration such as 10s, got %s", describe(n))
		return 0, false
	}
	tag := n.ShortTag()
	if tag != "!!str" && tag != "!!int" && tag != "!!float" {
		l.errorf(n, path, "expected a duration such as 10s, got %s", describe(n))
		return 0, false
	}
	s := strings.TrimSpace(n.Value)
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && isNumber(s):
		l.errorf(n, path, "duration %s is missing a unit", s).Hint = "e.g. " + s + "s"
		return 0, false
	case err != nil && durationSyntax().MatchString(s):
		l.errorf(n, path, "duration %q is too large", s).Hint = "at most " + formatDuration(MaxDuration)
		return 0, false
	case err != nil:
		l.errorf(n, path, "invalid duration %q", s).Hint = hint
		return 0, false
	case d < 0:
		l.errorf(n, path, "duration %s is negative", s)
		return 0, false
	case d > MaxDuration:
		l.errorf(n, path, "duration %s is too large", s).Hint = "at most " + formatDuration(MaxDuration)
		return 0, false
	case d == 0 && positive:
		l.errorf(n, path, "duration must be greater than 0")
		return 0, false
	}
	return d, true
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// formatDuration prints d without Go's trailing zero units: 24h, not 24h0m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
