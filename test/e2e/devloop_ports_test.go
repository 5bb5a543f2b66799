package e2e

import (
	"strings"
	"testing"
)

// TestRunDetached_TwoProjectsOnTheDefaultPort: two projects whose configs
// leave listen at its default (:9464) both run in the background; the one
// that finds the port taken serves no HTTP port and says so, and each
// project's status still reaches its own podvisor through its socket.
func TestRunDetached_TwoProjectsOnTheDefaultPort(t *testing.T) {
	a := newProject(t, "processes:\n  alpha: {command: [sleep, \"1000\"]}\n")
	b := newProject(t, "processes:\n  beta: {command: [sleep, \"1000\"]}\n")
	outA := a.must(0, "run", "-d")
	outB := b.must(0, "run", "-d")
	const note = "so this run serves no HTTP port"
	if !strings.Contains(outA, note) && !strings.Contains(outB, note) {
		t.Errorf("neither run -d said it serves no HTTP port, yet both run:\n%s\n%s", outA, outB)
	}
	if out := a.must(0, "status"); !strings.Contains(out, "alpha") || strings.Contains(out, "beta") {
		t.Errorf("status in project a:\n%s", out)
	}
	if out := b.must(0, "status"); !strings.Contains(out, "beta") || strings.Contains(out, "alpha") {
		t.Errorf("status in project b:\n%s", out)
	}
	a.must(0, "down")
	b.must(0, "down")
}
