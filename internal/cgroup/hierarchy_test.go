package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeV2 lays out the files of a v2 cgroup directory in a plain directory:
// the processes in it, the controllers it offers, and cgroup.type unless
// it is the root of the hierarchy (which has none).
func fakeV2(t *testing.T, root bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cgroup.controllers":     "cpuset cpu io memory pids\n",
		"cgroup.subtree_control": "",
		"cgroup.procs":           "2\n3\n77\n", // kthreadd and a kernel thread at the root
	}
	if !root {
		files["cgroup.type"] = "domain\n"
		// The kernel makes a new cgroup's files; here the leaf's is made
		// ahead (Open reuses a leaf that exists).
		if err := os.Mkdir(filepath.Join(dir, "podvisor"), 0o755); err != nil {
			t.Fatal(err)
		}
		files["podvisor/cgroup.procs"] = ""
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(t.TempDir(), "cgroup")
	if err := os.WriteFile(self, []byte("0::/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, self, 77); err != nil {
		t.Fatal(err)
	}
	return dir
}

// At the root of the hierarchy (podvisor as a machine's init) nothing is
// moved: the root may hold processes beside child cgroups, and its kernel
// threads refuse to move (the VM test found Open failing with EINVAL on
// kthreadd). The controllers are enabled all the same.
func TestV2RootStaysPut(t *testing.T) {
	dir := fakeV2(t, true)
	if _, err := os.Stat(filepath.Join(dir, "podvisor")); err == nil {
		t.Error("made a leaf at the root of the hierarchy")
	}
	if got := read(t, filepath.Join(dir, "cgroup.subtree_control")); got != "+memory +cpu +pids" {
		t.Errorf("subtree_control %q", got)
	}
}

// Below the root (a container's cgroup, a systemd unit's) everything in
// podvisor's cgroup moves to its leaf first.
func TestV2MovesIntoLeafBelowTheRoot(t *testing.T) {
	dir := fakeV2(t, false)
	got := strings.TrimSpace(read(t, filepath.Join(dir, "podvisor", "cgroup.procs")))
	if got != "77" { // the last one written: a plain file keeps one value
		t.Errorf("leaf's cgroup.procs %q, want the last pid moved", got)
	}
	if got := read(t, filepath.Join(dir, "cgroup.subtree_control")); got != "+memory +cpu +pids" {
		t.Errorf("subtree_control %q", got)
	}
}
