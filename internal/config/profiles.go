// profiles: on a process, and the run's set it chooses (the selection:
// which processes a run starts, from --profile and process names). The
// rules follow docker compose's profiles (docs/configuration.md#profiles).

package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/podvisor/podvisor/internal/graph"
)

// profileName is docker compose's rule for a profile's name.
var profileName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// ValidProfileName reports whether s may name a profile.
func ValidProfileName(s string) bool { return len(s) <= 63 && profileName.MatchString(s) }

// Selection says which processes a run starts: those without profiles plus
// those in Profiles, or, when Names is set, the named processes (whatever
// their profiles). Either way the dependencies of a selected process are
// selected too, transitively.
type Selection struct {
	Profiles []string
	Names    []string
}

// IsZero reports whether s selects the default set.
func (s Selection) IsZero() bool { return len(s.Profiles) == 0 && len(s.Names) == 0 }

// Profiles returns every profile a process of c names, sorted.
func (c *Config) Profiles() []string {
	var out []string
	for _, name := range c.Names {
		out = append(out, c.Processes[name].Profiles...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Select returns the names of the processes s selects, in c.Names order.
// It is pure: a profile no process names and a name that is no process are
// errors (naming the file and, where one is close, what was meant), since a
// typo would otherwise start less than was meant without a word.
func (c *Config) Select(s Selection) ([]string, error) {
	known := c.Profiles()
	for _, p := range s.Profiles {
		if !slices.Contains(known, p) {
			return nil, &Error{Pos: Pos{File: c.File}, Path: "profiles", Msg: fmt.Sprintf("no process has profile %q", p), Hint: profileHint(p, known)}
		}
	}
	for _, n := range s.Names {
		if _, ok := c.Processes[n]; !ok {
			return nil, &Error{Pos: Pos{File: c.File}, Path: "processes", Msg: fmt.Sprintf("no process is named %q", n), Hint: nameHint(n, c.Names)}
		}
	}
	in := make(map[string]bool, len(c.Names))
	var add func(string)
	add = func(name string) {
		if in[name] {
			return
		}
		in[name] = true
		for _, d := range c.Processes[name].DependsOn {
			add(d.Name)
		}
	}
	for _, name := range c.Names {
		if len(s.Names) > 0 && slices.Contains(s.Names, name) ||
			len(s.Names) == 0 && inProfiles(c.Processes[name].Profiles, s.Profiles) {
			add(name)
		}
	}
	out := make([]string, 0, len(in))
	for _, name := range c.Names {
		if in[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

// inProfiles reports whether a process with profiles has is enabled when
// active are: it has none, or one of them is active.
func inProfiles(has, active []string) bool {
	if len(has) == 0 {
		return true
	}
	for _, p := range has {
		if slices.Contains(active, p) {
			return true
		}
	}
	return false
}

func profileHint(p string, known []string) string {
	if s := suggest(p, known); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	if len(known) == 0 {
		return "no process has profiles:"
	}
	return "the profiles are " + strings.Join(known, ", ")
}

func nameHint(n string, names []string) string {
	if s := suggest(n, names); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "see podvisor graph for the names"
}

// Subset returns c with only the named processes (which must include
// every dependency of each: Select's result), for graph, check and kube
// generate. The processes are shared with c, not copied.
func (c *Config) Subset(names []string) (*Config, error) {
	sub := *c
	sub.Names = slices.Clone(names)
	slices.Sort(sub.Names)
	sub.Processes = make(map[string]*Process, len(names))
	var edges []graph.Edge
	for _, name := range sub.Names {
		p := c.Processes[name]
		sub.Processes[name] = p
		for _, d := range p.DependsOn {
			edges = append(edges, graph.Edge{From: name, To: d.Name, Cond: d.Condition})
		}
	}
	g, err := graph.New(sub.Names, edges)
	if err != nil {
		return nil, fmt.Errorf("%s: the selected processes: %w", c.File, err)
	}
	sub.Graph = g
	return &sub, nil
}
