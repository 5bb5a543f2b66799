package importer

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"text/template" // tests only: the renderer is checked against the real thing

	"github.com/podvisor/podvisor/internal/config"
)

// FuzzPcRender checks the {{.NAME}} renderer against text/template, which
// process-compose renders with: whatever pcRender renders, text/template
// renders the same; what it refuses, it says so.
func FuzzPcRender(f *testing.F) {
	for _, s := range []string{"serve --port {{.PORT}}", "{{ .PC_REPLICA_NUM }}-x", "{{.MISSING}}", "{{if .A}}a{{end}}",
		"{{.A}}{{.B}}", "{{", "}}", "a {{- .A -}} b", "{{/* c */}}", "{{.A.B}}", "{{ . }}", "{{.é}}",
		`{{ or "${X}" .PORT }}`, `{{or "" .MISSING}}`, `{{or .MISSING "y"}}`, "{{or `${A}` `${B}` .A}}", `{{or "${X}" "}"}}`} {
		f.Add(s)
	}
	vars := map[string]string{"PORT": "8080", "PC_REPLICA_NUM": "1", "A": "x y", "B": "{{.A}}"}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := pcRender(s, vars)
		if err != nil {
			if !strings.Contains(err.Error(), "{{") {
				t.Errorf("%q: the error %q does not show the template", s, err)
			}
			return
		}
		if !strings.Contains(s, "{{") && got != s {
			t.Fatalf("%q without a template rendered as %q", s, got)
		}
		// process-compose expands ${VAR} before it renders: with every
		// variable unset, ${X} is empty there, and the ${X:-default}
		// pcRender writes for an or is the default.
		got = pcUnsetEnv().ReplaceAllString(got, "$1")
		tpl, err := template.New("").Parse(pcUnsetEnv().ReplaceAllString(s, "$1"))
		if err != nil {
			t.Fatalf("%q: rendered as %q but text/template refuses it: %v", s, got, err)
		}
		var b strings.Builder
		if err := tpl.Execute(&b, vars); err != nil {
			t.Fatalf("%q: text/template: %v", s, err)
		}
		if b.String() != got {
			t.Errorf("%q: rendered %q, text/template %q", s, got, b.String())
		}
	})
}

// pcUnsetEnv matches ${NAME} and ${NAME:-default} (the default in $1):
// what an unset variable expands to, in process-compose's file and in
// podvisor's.
var pcUnsetEnv = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(?::-([^}$]*))?\}`) })

// TestPcStringExpandsBareVars checks that $VAR, which process-compose
// expands at load like ${VAR} (unset: empty), becomes ${VAR:-}, and that $$, ${VAR} and a
// lone $ keep their meaning.
func TestPcStringExpandsBareVars(t *testing.T) {
	for in, want := range map[string]string{
		"$APP serve":        "${APP:-} serve",
		"a$B_1-c":           "a${B_1:-}-c",
		"${A} $$ x $":       "${A} $$ x $",
		"cost $5 and $ 1":   "cost $5 and $ 1",
		"echo $$HOME $HOME": "echo $$HOME ${HOME:-}",
		"${unterminated $X": "$${unterminated $$X",
	} {
		if got := pcString(in); got != want {
			t.Errorf("pcString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProcessComposeEnvKeysSaid checks that env_cmds is said not to run
// and that disable_env_expansion, which changes what every $ means, is
// said (issue 37: every $ stays text, the shell expands $X at run time).
func TestProcessComposeEnvKeysSaid(t *testing.T) {
	for conf, want := range map[string]string{
		"env_cmds:\n  TAG: git describe\nprocesses:\n  a:\n    command: x\n":    "env_cmds: not run",
		"disable_env_expansion: true\nprocesses:\n  a:\n    command: echo $X\n": "disable_env_expansion (every $ of the file kept as text",
	} {
		_, r, err := ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(conf)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if txt := reportText(r); !strings.Contains(txt, want) {
			t.Errorf("%q: report lacks %q:\n%s", conf, want, txt)
		}
	}
}

// TestProcessComposeExecProbeShape: an exec probe that is not a mapping
// with a command (process-compose's loader refuses one too) is an error
// naming it, never a written file whose probe is empty (found on the
// corpus: exec: "curl ..." became a procs.yaml that failed check).
func TestProcessComposeExecProbeShape(t *testing.T) {
	for doc, want := range map[string]string{
		"processes:\n  a:\n    command: x\n    readiness_probe:\n      exec: \"curl -f localhost\"\n": `pc.yaml:5: a.readiness_probe.exec: want a mapping with command:`,
		"processes:\n  a:\n    command: x\n    liveness_probe:\n      exec: {working_dir: /tmp}\n":    `pc.yaml:5: a.liveness_probe.exec.command: empty`,
	} {
		_, _, err := ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(doc)}, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", doc, err, want)
		}
	}
}

// TestProcessComposeDefaultedPolicy: process-compose substitutes
// ${VAR:-default} over the whole file at load, a restart policy included;
// the import writes the default and says so (found on the corpus).
func TestProcessComposeDefaultedPolicy(t *testing.T) {
	doc := "processes:\n  server:\n    command: ./server\n    availability:\n      restart: ${SERVER_RESTART:-always}\n"
	m, r, err := ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(doc)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Processes[0].Restart.Policy; got != config.Always {
		t.Errorf("restart policy %v, want always (the default)", got)
	}
	if !strings.Contains(reportText(r), `process-compose reads $SERVER_RESTART at load, with "always" as its default`) {
		t.Errorf("the report does not say the default was written:\n%s", reportText(r))
	}
}

// TestProcessComposeExtendsErrors: a base file that is missing, and a
// chain that comes back to a file, are refused naming the file, the line
// of extends: and the fix, as process-compose refuses to load them.
func TestProcessComposeExtendsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	procs := "processes:\n  a:\n    command: ./a\n"
	missing := write("missing.yaml", "version: \"0.5\"\nextends: nothere.yaml\n"+procs)
	a := write("a.yaml", "extends: b.yaml\n"+procs)
	write("b.yaml", "extends: ./a.yaml\n"+procs)
	self := write("self.yaml", "extends: self.yaml\n"+procs)
	for _, tc := range []struct{ file, want string }{
		{missing, "missing.yaml:2: extends \"nothere.yaml\": cannot read " + filepath.Join(dir, "nothere.yaml")},
		{a, "b.yaml:1: extends \"./a.yaml\": a cycle (" + a + " extends " + filepath.Join(dir, "b.yaml") + " extends " + a + ")"},
		{self, "self.yaml:1: extends \"self.yaml\": a cycle (" + self + " extends " + self + ")"},
		{write("list.yaml", "extends: [a.yaml]\n"+procs), "list.yaml:1: extends: want the path of the file this one extends, not a list"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = ConvertProcessCompose(Source{Path: tc.file, Data: data}, Options{})
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a ParseError containing %q", tc.file, err, tc.want)
		}
	}
}

// TestProcessComposeExtendsRoot: under import --root an absolute extends:
// is the image's path, and a relative one that climbs out of the root is
// refused.
func TestProcessComposeExtendsRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/pc"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := "processes:\n  base:\n    command: ./base\n"
	if err := os.WriteFile(filepath.Join(root, "etc/pc/base.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{Root: root, ReadFile: RootReader(root)}
	main := Source{Path: filepath.Join(root, "app.yaml"), Data: []byte("extends: /etc/pc/base.yaml\nprocesses:\n  app:\n    command: ./app\n")}
	m, _, err := ConvertProcessCompose(main, opt)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range m.Processes {
		names = append(names, p.Name+"@"+p.WorkingDir)
	}
	if got := strings.Join(names, " "); got != "base@/etc/pc app@" {
		t.Errorf("processes = %q, want the image's base merged (base@/etc/pc app@)", got)
	}
	out := Source{Path: filepath.Join(root, "app.yaml"), Data: []byte("extends: ../../outside.yaml\nprocesses:\n  app:\n    command: ./app\n")}
	_, _, err = ConvertProcessCompose(out, opt)
	if !errors.Is(err, ErrOutsideRoot) && (err == nil || !strings.Contains(err.Error(), "leads outside --root")) {
		t.Errorf("err = %v, want leads outside --root", err)
	}
}

// TestProcessComposeProcessExtendsErrors: a process extending an unknown
// process, itself, or a cycle is refused naming the line, as
// process-compose refuses to load it.
func TestProcessComposeProcessExtendsErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"processes:\n  a:\n    extends: ghost\n", "pc.yaml:3: process a: extends \"ghost\": no process of that name"},
		{"processes:\n  a:\n    extends: a\n", "pc.yaml:3: process a: extends itself"},
		{"processes:\n  a:\n    extends: b\n  b:\n    extends: a\n", "a cycle of process extends"},
	} {
		_, _, err := ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(tc.file)}, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.file, err, tc.want)
		}
	}
}
