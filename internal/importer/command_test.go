package importer

import (
	"slices"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// TestArgvWinsOverString: a process-compose entrypoint (an argv) is the
// command whether it comes before or after command (a string), and an
// empty entrypoint leaves the string; an empty shutdown command is none.
func TestArgvWinsOverString(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
		shell      bool
	}{
		{"command first", "    command: echo a\n    entrypoint: [/bin/b, x]\n", []string{"/bin/b", "x"}, false},
		{"entrypoint first", "    entrypoint: [/bin/b, x]\n    command: echo a\n", []string{"/bin/b", "x"}, false},
		{"empty entrypoint", "    command: echo a\n    entrypoint: []\n", []string{"/bin/sh", "-c", "echo a"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "processes:\n  a:\n" + c.body + "    shutdown: {command: \"\"}\n"
			m, r, err := ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(src)}, Options{})
			if err != nil || r.Failed() {
				t.Fatalf("convert: %v\n%s", err, reportText(r))
			}
			p := m.Process("a")
			if !slices.Equal(p.Command, c.want) || p.Shell != c.shell {
				t.Errorf("command %q (shell %v), want %q (shell %v)", p.Command, p.Shell, c.want, c.shell)
			}
			if p.Stop.Command != nil {
				t.Errorf("stop command %q, want none", p.Stop.Command)
			}
			cfg, _, err := parsePortableHere(t, config.Write(m))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Processes["a"].Command; !slices.Equal(got, c.want) {
				t.Errorf("loaded command %q, want %q", got, c.want)
			}
		})
	}
}
