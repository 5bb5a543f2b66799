package kube

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// place is where in the pod spec a message is about: its text, as the
// message names it ("containers[0] (app).env[3] (X)"), and its path from
// the spec, which finds the node for the error's line and column. The
// position is carried as data, never read back from the message.
type place struct {
	text  string
	steps []step // nil: no node of the spec (the object's start stands for it)
}

// step is one field of a place's path, and the element of it when index
// is not negative.
type step struct {
	field string
	index int
}

func (p place) String() string { return p.text }

// specItem is the i-th element of the spec's list field, named text in
// messages.
func specItem(text, field string, i int) place {
	return place{text: text, steps: []step{{field, i}}}
}

// in is the field of p, or the fields one inside the other.
func (p place) in(fields ...string) place {
	q := place{text: p.text, steps: slices.Clone(p.steps)}
	for _, f := range fields {
		q.text += "." + f
		if p.steps != nil {
			q.steps = append(q.steps, step{f, -1})
		}
	}
	return q
}

// item is the i-th element of p's list field, labelled with name in the
// message when name is not empty.
func (p place) item(field string, i int, name string) place {
	q := place{text: fmt.Sprintf("%s.%s[%d]", p.text, field, i), steps: slices.Clone(p.steps)}
	if name != "" {
		q.text += " (" + name + ")"
	}
	if p.steps != nil {
		q.steps = append(q.steps, step{field, i})
	}
	return q
}

// node finds the deepest node of spec on p's path; nil when there is none.
func (p place) node(spec *yaml.Node) *yaml.Node {
	if spec == nil {
		return nil
	}
	var found *yaml.Node
	n := spec
	for _, s := range p.steps {
		if n = mapValue(n, s.field); n == nil {
			break
		}
		found = n
		if s.index >= 0 {
			if n.Kind != yaml.SequenceNode || s.index >= len(n.Content) {
				break
			}
			n = n.Content[s.index]
			found = n
		}
	}
	return found
}
