package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// profilesSrc is docker compose's illustrative example for profiles
// (web always; test_lib and coverage_lib in test; debug_lib in debug,
// depending on test_lib), with a chain for subsets.
const profilesSrc = `
processes:
  web: {command: web, depends_on: [api]}
  api: {command: api, depends_on: [db]}
  db: {command: db}
  worker: {command: worker, depends_on: [db]}
  test_lib: {command: t, profiles: [test]}
  coverage_lib: {command: c, depends_on: [test_lib], profiles: [test]}
  debug_lib: {command: d, depends_on: [test_lib], profiles: [debug, dev]}
`

func TestSelect(t *testing.T) {
	cfg := mustParse(t, profilesSrc, nil)
	cases := []struct {
		name string
		sel  Selection
		want []string
	}{
		{"no profile: the processes without one", Selection{}, []string{"api", "db", "web", "worker"}},
		{"a profile adds its processes", Selection{Profiles: []string{"test"}}, []string{"api", "coverage_lib", "db", "test_lib", "web", "worker"}},
		// compose refuses a dependency in a profile that is not enabled;
		// podvisor enables it (docs/configuration.md#profiles).
		{"a dependency in another profile comes along", Selection{Profiles: []string{"debug"}}, []string{"api", "db", "debug_lib", "test_lib", "web", "worker"}},
		{"any of a process's profiles enables it", Selection{Profiles: []string{"dev"}}, []string{"api", "db", "debug_lib", "test_lib", "web", "worker"}},
		{"names: those and their dependencies only", Selection{Names: []string{"web"}}, []string{"api", "db", "web"}},
		{"a named process in a profile runs", Selection{Names: []string{"coverage_lib"}}, []string{"coverage_lib", "test_lib"}},
		{"names win over profiles", Selection{Names: []string{"worker"}, Profiles: []string{"test"}}, []string{"db", "worker"}},
		{"several names", Selection{Names: []string{"worker", "debug_lib"}}, []string{"db", "debug_lib", "test_lib", "worker"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cfg.Select(tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Select(%+v) = %v, want %v", tc.sel, got, tc.want)
			}
		})
	}
}

func TestSelectErrors(t *testing.T) {
	cfg := mustParse(t, profilesSrc, nil)
	cases := []struct {
		sel  Selection
		want string
	}{
		{Selection{Profiles: []string{"tset"}}, `procs.yaml profiles: no process has profile "tset" (did you mean "test"?)`},
		{Selection{Profiles: []string{"nothing-like"}}, `no process has profile "nothing-like" (the profiles are debug, dev, test)`},
		{Selection{Names: []string{"wep"}}, `procs.yaml processes: no process is named "wep" (did you mean "web"?)`},
	}
	for _, tc := range cases {
		_, err := cfg.Select(tc.sel)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Select(%+v) = %v, want an *Error with %q", tc.sel, err, tc.want)
		}
	}
}

func TestProfilesKey(t *testing.T) {
	cfg := mustParse(t, "processes:\n  a: {command: x, profiles: [dev, debug, dev]}\n", nil)
	if got := cfg.Processes["a"].Profiles; !slices.Equal(got, []string{"debug", "dev"}) {
		t.Errorf("profiles = %v, want [debug dev] (sorted, no duplicates)", got)
	}
	runErrCases(t, []errCase{
		{name: "not a list", src: "processes:\n  a: {command: x, profiles: dev}\n",
			pos: "procs.yaml:2:29", path: "processes.a.profiles", msg: "expected a list of profile names"},
		{name: "bad name", src: "processes:\n  a: {command: x, profiles: [ok, -bad]}\n",
			pos: "procs.yaml:2:34", path: "processes.a.profiles", msg: `"-bad" is not a profile name`},
	})
}

func TestSubset(t *testing.T) {
	cfg := mustParse(t, profilesSrc, nil)
	names, err := cfg.Select(Selection{Names: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cfg.Subset(names)
	if err != nil {
		t.Fatal(err)
	}
	if got := sub.Graph.Levels(); len(got) != 3 || got[0][0] != "db" || got[2][0] != "web" {
		t.Errorf("levels %v, want [[db] [api] [web]]", got)
	}
	if _, ok := sub.Processes["worker"]; ok || len(cfg.Processes) != 7 {
		t.Errorf("subset holds worker, or the config was changed")
	}
}
