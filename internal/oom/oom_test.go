package oom

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenFindsTheCounter(t *testing.T) {
	for _, c := range []struct {
		name, cgroup, file, content string
	}{
		{"v2", "0::/kubepods/pod1/c1\n", "kubepods/pod1/c1/memory.events", "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n"},
		{"v2 namespaced", "0::/\n", "memory.events", "oom 1\noom_kill 2\noom_group_kill 0\n"},
		{"v1", "12:pids:/x\n4:memory:/docker/abc\n0::/\n", "memory/docker/abc/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"},
		{"v1 namespaced", "4:memory:/docker/abc\n", "memory/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, "self"), c.cgroup)
			file := filepath.Join(root, "fs", c.file)
			write(t, file, c.content)
			d, err := Open(filepath.Join(root, "fs"), filepath.Join(root, "self"))
			if err != nil {
				t.Fatal(err)
			}
			if d.File() != file {
				t.Fatalf("file %s, want %s", d.File(), file)
			}
			if d.Claim() {
				t.Fatal("kills from before Open were claimed")
			}
			write(t, file, c.content+"\n") // unchanged count
			updated := map[string]string{
				"v2": "oom_kill 4\n", "v2 namespaced": "oom_kill 4\n", "v1": "oom_kill 4\n", "v1 namespaced": "oom_kill 4\n",
			}[c.name]
			write(t, file, "under_oom 0\n"+updated)
			first, second := d.Claim(), d.Claim()
			if !first || !second {
				t.Fatal("two new kills, not both claimed")
			}
			if d.Claim() {
				t.Fatal("a third claim for two kills")
			}
		})
	}
}

func TestNothingReadable(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "self"), "0::/x\n")
	d, err := Open(filepath.Join(root, "fs"), filepath.Join(root, "self"))
	if err == nil || d != nil {
		t.Fatalf("got %v, %v; want an error", d, err)
	}
	if d.Claim() || d.File() != "" {
		t.Fatal("a nil detector detected something")
	}
}
