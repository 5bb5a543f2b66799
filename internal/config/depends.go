package config

import (
	"slices"
	"strings"

	"github.com/podvisor/podvisor/internal/graph"
	"go.yaml.in/yaml/v3"
)

// depRef is a depends_on entry before it is checked against the other
// processes.
type depRef struct {
	dep  Dependency
	node *yaml.Node
}

// cycle reports one cycle at the depends_on entry of its first process that
// points to the second, the edge most likely to need breaking first.
func (l *loader) cycle(c []string, refs map[string][]depRef, fallback *yaml.Node) {
	msg := "dependency cycle: " + strings.Join(c, " -> ")
	if len(c) >= 2 {
		for _, r := range refs[c[0]] {
			if r.dep.Name == c[1] {
				l.errorf(r.node, top("processes").field(c[0]).field("depends_on"), "%s", msg)
				return
			}
		}
	}
	l.errorf(fallback, top("processes"), "%s", msg)
}

// dependsOn decodes the list form (each entry means condition ready) or the
// map form (name: condition, or name: {condition, restart}).
func (l *loader) dependsOn(n *yaml.Node, path *keyPath) []depRef {
	refs := make([]depRef, 0, len(n.Content))
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			name, ok := l.str(c, path)
			if !ok {
				continue
			}
			if i := slices.IndexFunc(refs, func(r depRef) bool { return r.dep.Name == name }); i >= 0 {
				l.errorf(c, path, "%q is listed more than once (first at line %d)", name, refs[i].node.Line)
				continue
			}
			refs = append(refs, depRef{Dependency{Name: name, Condition: graph.Ready, Pos: l.pos(c)}, c})
		}
	case yaml.MappingNode:
		pairs, _ := l.mapping(n, path)
		for _, p := range pairs {
			d := Dependency{Name: p.name, Condition: graph.Ready, Pos: l.pos(p.key)}
			if l.dependency(p.val, path.field(p.name), &d) {
				refs = append(refs, depRef{d, p.key})
			}
		}
	default:
		l.errorf(n, path, "expected a list of process names or a mapping of name to condition, got %s", describe(n))
	}
	return refs
}

// dependency decodes the value of one map-form depends_on entry into d.
func (l *loader) dependency(n *yaml.Node, path *keyPath, d *Dependency) bool {
	if n.Kind == yaml.ScalarNode {
		c, ok := l.condition(n, path)
		d.Condition = c
		return ok
	}
	f, ok := l.fields(n, path, dependencyKeys)
	if !ok {
		return false
	}
	if v, ok := f.get("condition"); ok {
		if d.Condition, ok = l.condition(v.val, path.field("condition")); !ok {
			return false
		}
	}
	if v, ok := f.get("restart"); ok {
		if d.Restart, ok = l.boolean(v.val, path.field("restart")); !ok {
			return false
		}
	}
	return true
}

func (l *loader) condition(n *yaml.Node, path *keyPath) (graph.Condition, bool) {
	w, ok := l.word(n, path, "condition", conditionWords)
	if !ok {
		return graph.Ready, false
	}
	return graph.Condition(slices.Index(conditionWords, w)), true
}
