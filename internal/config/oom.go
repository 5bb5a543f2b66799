package config

import "go.yaml.in/yaml/v3"

// The range of /proc/<pid>/oom_score_adj.
const (
	MinOOMScoreAdj = -1000
	MaxOOMScoreAdj = 1000
)

// oomScoreAdj decodes oom_score_adj: a whole number in -1000..1000.
func (l *loader) oomScoreAdj(n *yaml.Node, path *keyPath) *int {
	v, ok := l.integer(n, path)
	if !ok {
		return nil
	}
	if v < MinOOMScoreAdj || v > MaxOOMScoreAdj {
		l.errorf(n, path, "oom_score_adj %d is out of range -1000..1000", v).Hint =
			"1000 makes the process the OOM killer's first choice, -1000 exempts it"
		return nil
	}
	return &v
}
