package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestControlAndLogTail(t *testing.T) {
	cfg := mustParse(t, "processes: {a: {command: [x]}}\n", nil)
	if cfg.Control != "" || cfg.Log.Tail != DefaultLogTail {
		t.Fatalf("defaults: control %q tail %d, want \"\" and %d", cfg.Control, cfg.Log.Tail, DefaultLogTail)
	}
	cfg = mustParse(t, "control: \"off\"\nlog: {tail: 0}\nprocesses: {a: {command: [x]}}\n", nil)
	if cfg.Control != "off" || cfg.Log.Tail != 0 {
		t.Fatalf("control %q tail %d, want off and 0", cfg.Control, cfg.Log.Tail)
	}
	cfg = mustParse(t, "control: ${D}/c.sock\nprocesses: {a: {command: [x]}}\n", map[string]string{"D": "/run/x"})
	if cfg.Control != "/run/x/c.sock" {
		t.Fatalf("control %q, want /run/x/c.sock", cfg.Control)
	}
	cfg = mustParse(t, "control: sock/c.sock\nprocesses: {a: {command: [x]}}\n", nil)
	if want := filepath.Join(cfg.Dir, "sock/c.sock"); cfg.Control != want {
		t.Fatalf("relative control %q, want %q", cfg.Control, want)
	}
	for _, c := range []struct{ src, want string }{
		{"control: /" + strings.Repeat("x", 120) + "\n", "longer than the 107"},
		{"control: [a]\n", "control: expected a string"},
		{"log: {tail: -1}\n", "log tail -1 is out of range"},
		{"log: {tail: many}\n", "expected a whole number"},
		{"log: {tial: 3}\n", `did you mean "tail"`},
	} {
		_, err := Parse(testFile, []byte(c.src+"processes: {a: {command: [x]}}\n"), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.src, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "procs.yaml:1:") {
			t.Errorf("%q: error %v has no position", c.src, err)
		}
	}
}

func TestSpawnDiff(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "app.env")
	write := func(s string) {
		if err := os.WriteFile(envFile, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := func(src string, vars map[string]string) *Process {
		t.Helper()
		path := filepath.Join(dir, "procs.yaml")
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, env(vars))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Processes["app"]
	}
	base := "processes:\n  db: {command: [db]}\n  app:\n    command: [\"srv\", \"${PORT}\"]\n    env_file: app.env\n    depends_on: [db]\n    ready: {tcp: 127.0.0.1:1}\n"
	write("A=1\n")
	a := load(base, map[string]string{"PORT": "1"})

	same := []struct {
		name string
		src  string
		vars map[string]string
	}{
		{"identical", base, map[string]string{"PORT": "1"}},
		{"reformatted", "processes:\n  app: {command: [srv, \"1\"], env_file: [app.env], ready: {tcp: \"127.0.0.1:1\"}, depends_on: {db: ready}}\n  db:\n    command: [db]\n", nil},
	}
	for _, c := range same {
		if d := SpawnDiff(a, load(c.src, c.vars)); d != "" {
			t.Errorf("%s: SpawnDiff %q, want none", c.name, d)
		}
		if d := SettingsDiff(a, load(c.src, c.vars)); d != "" {
			t.Errorf("%s: SettingsDiff %q, want none", c.name, d)
		}
	}
	if d := SpawnDiff(a, load(base, map[string]string{"PORT": "2"})); d != "command changed" {
		t.Errorf("interpolated value changed: %q", d)
	}
	write("A=2\n")
	if d := SpawnDiff(a, load(base, map[string]string{"PORT": "1"})); d != "environment changed" {
		t.Errorf("env_file edited: %q", d)
	}
	write("A=1\n")
	if d := SpawnDiff(a, load(strings.Replace(base, "127.0.0.1:1", "127.0.0.1:2", 1), map[string]string{"PORT": "1"})); d != "ready check changed" {
		t.Errorf("probe target changed: %q", d)
	}
	if d := SpawnDiff(a, load(base+"    working_dir: /tmp\n", map[string]string{"PORT": "1"})); d != "working_dir changed" {
		t.Errorf("working_dir: %q", d)
	}
	b := load(base+"    stop: {timeout: 3s}\n    restart: on-failure\n", map[string]string{"PORT": "1"})
	if d := SpawnDiff(a, b); d != "" {
		t.Errorf("stop/restart changes must not need a restart: %q", d)
	}
	if d := SettingsDiff(a, b); d == "" {
		t.Errorf("stop/restart changes not seen by SettingsDiff")
	}
	if d := SettingsDiff(a, load(strings.Replace(base, "depends_on: [db]", "depends_on: {db: started}", 1), map[string]string{"PORT": "1"})); d != "depends_on changed" {
		t.Errorf("condition changed: %q", d)
	}
}
