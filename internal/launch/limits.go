package launch

import (
	"fmt"
	"slices"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// withPrivileges puts p's limits, umask, no_new_privs and ambient
// capabilities into spec. The config has checked the names already.
func withPrivileges(spec *proc.Spec, p *config.Process) {
	for _, l := range p.Limits {
		if res, ok := proc.RlimitResource(l.Name); ok {
			spec.Rlimits = append(spec.Rlimits, proc.Rlimit{Name: l.Name, Resource: res, Soft: l.Soft, Hard: l.Hard})
		}
	}
	spec.Umask, spec.NoNewPrivs = p.Umask, p.NoNewPrivs
	for _, c := range p.AmbientCaps {
		if n := slices.Index(config.CapabilityNames, c); n >= 0 {
			spec.AmbientCaps = append(spec.AmbientCaps, uintptr(n))
		}
	}
}

// PrivilegeWarnings says, per process, which limits or capabilities podvisor
// could not give here as it runs now (podvisor check).
func PrivilegeWarnings(cfg *config.Config) []string {
	var out []string
	for _, name := range cfg.Names {
		var spec proc.Spec
		withPrivileges(&spec, cfg.Processes[name])
		if err := proc.CheckPrivileges(spec); err != nil {
			out = append(out, fmt.Sprintf("process %q: %v; podvisor run as it is here would fail to start it", name, err))
		}
	}
	return out
}
