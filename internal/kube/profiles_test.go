package kube

import (
	"slices"
	"testing"
)

// The fat shape's podvisor runs the profiles kube generate was given.
func TestGenerateFatProfiles(t *testing.T) {
	cfg, raw := genConfig(t, genProcs)
	g, err := Generate(cfg, GenerateOptions{Name: "shop", Image: "shop:1", Raw: raw, Profiles: []string{"dev", "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode("gen.yaml", g.Manifest)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.Manifest)
	}
	w, _ := m.Pick("")
	want := []string{"podvisor", "run", "-c", "/etc/podvisor/procs.yaml", "--profile", "dev", "--profile", "debug"}
	if got := w.Spec.Containers[0].Command; !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
}
