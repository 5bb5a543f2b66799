package kube

import (
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "B": "$(A)", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "a"},
		{"x$(A)y$(A)", "xaya"},
		{"$(B)", "$(A)"},                   // values are not expanded again
		{"$(UNSET)", "$(UNSET)"},           // unknown: kept as written
		{"$$(A)", "$(A)"},                  // escaped reference
		{"$$$(A)", "$a"},                   // escaped $, then a reference
		{"$$", "$"},                        // escaped operator
		{"$HOME", "$HOME"},                 // not a reference: kept for the shell
		{"${A}", "${A}"},                   // shell syntax: kept
		{"$(A", "$(A"},                     // incomplete: kept
		{"a$", "a$"},                       // trailing operator
		{"$(EMPTY)x", "x"},                 // set but empty
		{"$(date +%s%N)", "$(date +%s%N)"}, // command substitution in a shell script survives
		{"$()", "$()"},
	} {
		if got := expand(tc.in, lookup); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseDependsOn(t *testing.T) {
	got, err := parseDependsOn("app=proxy:ready,db:started; worker=db")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]config.Dependency{"app": {{Name: "proxy", Condition: graph.Ready}, {Name: "db", Condition: graph.Started}}, "worker": {{Name: "db", Condition: graph.Ready}}}
	if len(got) != 2 || len(got["app"]) != 2 || got["app"][1] != want["app"][1] || got["worker"][0] != want["worker"][0] {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"proxy:ready", "app=proxy:healthy"} {
		if _, err := parseDependsOn(bad); err == nil {
			t.Errorf("parseDependsOn(%q): no error", bad)
		}
	}
}

func TestParseQuantity(t *testing.T) {
	for in, want := range map[string]float64{"500m": 0.5, "2": 2, "128Mi": 128 << 20, "1G": 1e9, "1.5": 1.5, "1Ki": 1024} {
		got, err := parseQuantity(in)
		if err != nil || got != want {
			t.Errorf("parseQuantity(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1", "1X"} {
		if _, err := parseQuantity(bad); err == nil {
			t.Errorf("parseQuantity(%q): no error", bad)
		}
	}
}
