package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// profileList is --profile, repeatable; each value may also be a
// comma-separated list, as $PODVISOR_PROFILES is (compose's
// COMPOSE_PROFILES).
type profileList []string

func (p *profileList) String() string { return strings.Join(*p, ",") }

func (p *profileList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !config.ValidProfileName(name) {
			return fmt.Errorf("%q is not a profile name (2 to 63 letters, digits, _ . -, starting with a letter or digit)", name)
		}
		if !slices.Contains(*p, name) {
			*p = append(*p, name)
		}
	}
	return nil
}

// profileFlag registers --profile; the default is $PODVISOR_PROFILES
// (replaced, not extended, by the flag).
func profileFlag(fs *flag.FlagSet) *profileList {
	p := &profileList{}
	env := &envDefault{list: p, value: os.Getenv("PODVISOR_PROFILES")}
	fs.Var(env, "profile", "enable the processes of profile `NAME` besides those without profiles (repeatable, or comma-separated; default $PODVISOR_PROFILES)")
	_ = p.Set(env.value) // an invalid name in the variable is reported by selection
	return p
}

// envDefault is a profileList whose first Set drops the environment's
// default.
type envDefault struct {
	list  *profileList
	value string
	set   bool
}

func (e *envDefault) String() string {
	if e.list == nil {
		return ""
	}
	return e.list.String()
}

func (e *envDefault) Set(v string) error {
	if !e.set {
		*e.list, e.set = nil, true
	}
	return e.list.Set(v)
}

// selection is the run's set as the flags and the names after them say.
func selection(profiles *profileList, names []string) config.Selection {
	return config.Selection{Profiles: slices.Clone(*profiles), Names: names}
}

// selectConfig returns cfg with only the processes sel selects (graph,
// check, kube generate), or an error for the command to print (exit 2).
func selectConfig(cfg *config.Config, sel config.Selection) (*config.Config, error) {
	names, err := cfg.Select(sel)
	if err != nil {
		return nil, err
	}
	if len(names) == len(cfg.Names) {
		return cfg, nil
	}
	return cfg.Subset(names)
}

// outsideOf returns supervisor.Options.Outside for sel: the processes of a
// config that sel does not select. A reloaded config may have lost a
// named process or a profile: what is left of sel still applies.
func outsideOf(sel config.Selection) func(*config.Config) []string {
	return func(cfg *config.Config) []string {
		known := cfg.Profiles()
		s := config.Selection{
			Profiles: slices.DeleteFunc(slices.Clone(sel.Profiles), func(p string) bool { return !slices.Contains(known, p) }),
			Names:    slices.DeleteFunc(slices.Clone(sel.Names), func(n string) bool { return cfg.Processes[n] == nil }),
		}
		if len(sel.Names) > 0 && len(s.Names) == 0 {
			return cfg.Names // every named process is gone: nothing more starts
		}
		in, err := cfg.Select(s)
		if err != nil {
			return nil
		}
		selected := make(map[string]bool, len(in))
		for _, n := range in {
			selected[n] = true
		}
		var out []string
		for _, n := range cfg.Names {
			if !selected[n] {
				out = append(out, n)
			}
		}
		return out
	}
}
