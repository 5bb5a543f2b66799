// A run of a subset (profiles, names after the config: config.Select): the
// processes outside it are held stopped from the start, count for neither
// readiness nor "all jobs completed", and podvisor start brings one in with
// the dependencies it needs (docs/configuration.md#profiles-and-subsets).

package supervisor

import "github.com/podvisor/podvisor/internal/config"

// reasonOutside is the reason /status shows for a process this run does
// not start.
const reasonOutside = "not in this run (its profiles, or the names podvisor run was given)"

// outside returns the names Options.Outside gives for cfg, as a set.
func (s *Supervisor) outside(cfg *config.Config) map[string]bool {
	if s.outsideOf == nil {
		return nil
	}
	names := s.outsideOf(cfg)
	set := make(map[string]bool, len(names))
	for _, n := range names {
		if _, ok := cfg.Processes[n]; ok {
			set[n] = true
		}
	}
	return set
}

// leaveOutside holds r, never started, out of this run.
func (s *Supervisor) leaveOutside(r *record) {
	r.op.held, r.op.outside = true, true
	s.setState(r, Stopped)
	r.reason = reasonOutside
}

// outsideDeps returns r's dependencies that are outside the run's set,
// transitively: podvisor start of r starts them along.
func (s *Supervisor) outsideDeps(r *record) []*record {
	var out []*record
	seen := map[*record]bool{}
	var walk func(*record)
	walk = func(x *record) {
		for _, d := range x.deps {
			dr := s.recs[d.idx]
			if seen[dr] {
				continue
			}
			seen[dr] = true
			if dr.op.outside {
				out = append(out, dr)
			}
			walk(dr)
		}
	}
	walk(r)
	return out
}
