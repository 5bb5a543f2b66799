package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
}

// A working directory the user cannot reach is named, with the directory
// that stops them, instead of execve's "permission denied" (Hardening H12).
func TestWorkingDirUnreachableForUserIsNamed(t *testing.T) {
	requireRoot(t)
	base, err := os.MkdirTemp("", "podvisor-access-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	locked := filepath.Join(base, "locked")
	inner := filepath.Join(locked, "srv")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	nobody := Cred{UID: 65534, GID: 65534}
	err = searchableBy(inner, nobody)
	if err == nil || !strings.Contains(err.Error(), `"`+locked+`"`) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("searchableBy = %v, want an error naming %s and the uid", err, locked)
	}
	if err := searchableBy(base, nobody); err != nil {
		t.Errorf("a 0755 directory is reachable: %v", err)
	}
	if err := searchableBy(inner, Cred{UID: 0}); err != nil {
		t.Errorf("root reaches everything: %v", err)
	}
	// Group permission counts through supplementary groups.
	if err := os.Chmod(locked, 0o710); err != nil {
		t.Fatal(err)
	}
	if err := searchableBy(inner, Cred{UID: 65534, GID: 65534, Groups: []uint32{0}}); err != nil {
		t.Errorf("a member of the directory's group may search it: %v", err)
	}

	r := newReaper(t)
	_, err = Spawn(r, Spec{Argv: []string{"true"}, Dir: inner, Cred: &nobody})
	if err == nil || !strings.Contains(err.Error(), "working directory") || !strings.Contains(err.Error(), locked) {
		t.Errorf("Spawn error = %v, want one naming the working directory and %s", err, locked)
	}
}

// Probes and hooks run as the process's user, with its groups (H2).
func TestRunCommandAsUser(t *testing.T) {
	requireRoot(t)
	r := newReaper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, out, err := r.RunCommandAs(ctx, &Cred{UID: 65534, GID: 65534, Groups: []uint32{65533}}, []string{"sh", "-c", "id -u; id -g; id -G"}, nil, "/", 1024)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	if got := strings.Fields(string(out)); len(got) < 3 || got[0] != "65534" || got[1] != "65534" || !strings.Contains(string(out), "65533") {
		t.Errorf("ran as %q, want uid 65534, gid 65534, groups with 65533", out)
	}
	code, out, err = r.RunCommand(ctx, []string{"id", "-u"}, nil, "/", 64)
	if err != nil || code != 0 || strings.TrimSpace(string(out)) != "0" {
		t.Errorf("RunCommand without a user runs as podvisor (root): %q %d %v", out, code, err)
	}
}
