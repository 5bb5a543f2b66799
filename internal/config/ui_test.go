package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestUI(t *testing.T) {
	const procs = "processes: {a: {command: [x]}}\n"
	cfg := mustParse(t, procs, nil)
	if cfg.UI != (UI{Enabled: true}) {
		t.Errorf("default %+v, want enabled, read-only, no logs", cfg.UI)
	}
	if cfg = mustParse(t, "ui: false\n"+procs, nil); cfg.UI.Enabled {
		t.Errorf("ui: false gave %+v", cfg.UI)
	}
	cfg = mustParse(t, "ui: {actions: true, token_file: tok, logs: true}\n"+procs, nil)
	if want := (UI{Enabled: true, Actions: true, TokenFile: filepath.Join(cfg.Dir, "tok"), Logs: true}); cfg.UI != want {
		t.Errorf("long form %+v, want %+v", cfg.UI, want)
	}
	for _, c := range []struct{ src, want string }{
		{"ui: {actions: true}\n", "ui.actions: actions need a token_file"},
		{"ui: yes please\n", "ui: expected true or false"},
		{"ui: {log: true}\n", `did you mean "logs"`},
	} {
		_, err := Parse(testFile, []byte(c.src+procs), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.src, err, c.want)
		}
	}
}
