package timeline

import "github.com/podvisor/podvisor/internal/config"

// FromConfig describes cfg's processes in start order (by level, then name).
func FromConfig(cfg *config.Config) []Proc {
	var out []Proc
	for _, level := range cfg.Graph.Levels() {
		for _, name := range level {
			p := cfg.Processes[name]
			tp := Proc{Name: name, Type: p.Type.String(), DependsOn: []Dep{}, Scheduled: p.Schedule != nil}
			for _, d := range p.DependsOn {
				tp.DependsOn = append(tp.DependsOn, Dep{Name: d.Name, Condition: d.Condition.String()})
			}
			out = append(out, tp)
		}
	}
	return out
}

// ReconfiguredFrom is Reconfigured with cfg's processes: the supervisor
// calls it when a reload applied cfg.
func (r *Recorder) ReconfiguredFrom(cfg *config.Config) { r.Reconfigured(FromConfig(cfg)) }
