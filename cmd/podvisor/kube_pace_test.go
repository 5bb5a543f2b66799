package main

import (
	"slices"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/server"
)

// --pace: node by default, off with fast or --ordered (which refuses an
// explicit node); the noticed processes are the containers and the
// sidecars' postStart hooks, not a regular container's hook.
func TestPodPace(t *testing.T) {
	for _, tc := range []struct {
		pace    string
		ordered bool
		bad     bool
	}{{"", false, false}, {"node", false, false}, {"fast", false, false}, {"", true, false}, {"fast", true, false}, {"node", true, true}, {"slow", false, true}} {
		if err := checkPace(tc.pace, tc.ordered); (err != nil) != tc.bad {
			t.Errorf("--pace %q, --ordered %v: error %v, want one: %v", tc.pace, tc.ordered, err, tc.bad)
		}
	}
	roles := server.PodRoles{Init: []string{"i"}, Sidecars: []string{"s"}, Containers: []string{"app"}}
	cfg := &config.Config{Processes: map[string]*config.Process{"i": {}, "s": {}, "s.post-start": {}, "app": {}, "app.post-start": {}}}
	p := podPace("", false, roles, cfg)
	if p.Period != time.Second || p.Phase <= 0 || p.Phase > time.Second {
		t.Errorf("node pace: period %v phase %v, want 1s and a phase in (0, 1s]", p.Period, p.Phase)
	}
	if want := []string{"i", "s", "app", "s.post-start"}; !slices.Equal(p.Noticed, want) {
		t.Errorf("noticed %q, want %q", p.Noticed, want)
	}
	for _, off := range []struct {
		pace    string
		ordered bool
	}{{"fast", false}, {"", true}} {
		if p := podPace(off.pace, off.ordered, roles, cfg); p.Period != 0 {
			t.Errorf("--pace %q --ordered %v: period %v, want none", off.pace, off.ordered, p.Period)
		}
	}
}
