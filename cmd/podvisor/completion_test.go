package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// requireTool finds a shell, or skips (fails under PODVISOR_REQUIRE_TOOLS=1,
// as in CI, where make test installs it).
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s not installed (make test installs it)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// testCommands is the real table plus two commands of the kinds other
// branches add: an operate verb taking process names, and a two-word
// command. The scripts are generated from the table, so this checks the
// shapes a future entry can have.
func testCommands() []command {
	real := slices.Clone(commands)
	have := map[string]bool{}
	for _, c := range real {
		have[c.name] = true
	}
	for _, c := range fakeCommands() {
		if !have[c.name] {
			real = append(real, c)
		}
	}
	return real
}

// fakeCommands are the shapes testCommands adds when the real table lacks them.
func fakeCommands() []command {
	return append([]command(nil),
		command{name: "restart", summary: "restart processes", procArgs: true,
			flags: func(fs *flag.FlagSet) { fs.String("control", "", "control `SOCKET`") }},
		command{name: "kube play", summary: "run a Kubernetes manifest",
			flags: func(fs *flag.FlagSet) { fs.Bool("dry-run", false, "print only") }},
		command{name: "kube generate", summary: "write a manifest",
			flagWords: map[string][]string{"shape": {"fat", "sidecars"}},
			flags:     func(fs *flag.FlagSet) { fs.String("shape", "fat", "`SHAPE`") }},
	)
}

// completionDir holds a config with two processes, and another with one.
func completionDir(t *testing.T) string {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("procs.yaml", "processes:\n  web: {command: x}\n  worker: {command: y}\n")
	write("other.yaml", "processes:\n  db: {command: x}\n")
	return dir
}

// shellEnv makes "$0 completion names" in the scripts run this test binary
// as podvisor (see TestMain).
func shellEnv() []string {
	return append(os.Environ(), "PODVISOR_TEST_AS_MAIN=1", "PODVISOR_CONFIG=")
}

func TestBashCompletion(t *testing.T) {
	bash := requireTool(t, "bash")
	dir := completionDir(t)
	var script strings.Builder
	writeBash(&script, compCommands(testCommands()))
	if err := os.WriteFile(filepath.Join(dir, "podvisor.bash"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	tests := []struct {
		line string // the words typed; the last is being completed
		want []string
	}{
		{"podvisor ''", []string{"run", "check", "import", "graph", "mcp", "status", "timeline", "wait", "restart", "stop", "start", "signal", "reload", "exec", "down", "logs", "attach", "ui", "kube", "schema", "completion", "version", "help"}},
		{"podvisor st", []string{"status", "stop", "start"}},
		{"podvisor kube ''", []string{"play", "ps", "down", "generate"}},
		{"podvisor kube generate --sh", []string{"--shape"}},
		{"podvisor kube generate --shape ''", []string{"fat", "sidecars"}},
		{"podvisor kube play -", []string{"--ca-file", "--down", "--dry-run", "--from-dir", "--image-command", "--image-root", "--images", "--listen", "--log-format", "--name", "--ordered", "--pace", "--pull", "--restart-container-during-termination", "--volume-root", "--volumes"}},
		{"podvisor graph --format m", []string{"mermaid"}},
		{"podvisor import --from ''", []string{"supervisord", "process-compose", "procfile", "s6", "systemd"}},
		{"podvisor graph -format ''", []string{"text", "dot", "mermaid"}},
		{"podvisor run --log-format ''", []string{"text", "json"}},
		{"podvisor run -", []string{"-c", "--config", "--control", "-d", "--listen", "--log-format", "--profile"}},
		{"podvisor run -c oth", []string{"other.yaml"}},
		{"podvisor check --config oth", []string{"other.yaml"}},
		{"podvisor check -config oth", []string{"other.yaml"}},
		{"podvisor wait --t", []string{"--tcp", "--timeout"}},
		{"podvisor completion ''", []string{"bash", "zsh", "fish", "names"}},
		{"podvisor help wa", []string{"wait"}},
		{"podvisor restart ''", []string{"web", "worker"}},
		{"podvisor restart web w", []string{"web", "worker"}},
		// restart takes no -c: the names come from ./procs.yaml.
		{"podvisor restart -c other.yaml ''", []string{"web", "worker"}},
		{"podvisor restart -", []string{"--control", "-o", "--pod", "--timeout"}},
		// --control takes a socket's PATH: file names are offered.
		{"podvisor restart --control oth", []string{"other.yaml"}},
		{"podvisor signal ''", []string{"web", "worker"}},
		{"podvisor signal web ''", completionSignals},
		{"podvisor signal web U", []string{"USR1", "USR2"}},
		{"podvisor signal --timeout 5s web ''", completionSignals},
		{"podvisor signal -timeout=5s web H", []string{"HUP"}},
		{"podvisor signal web HUP ''", nil},
		{"podvisor logs --tail 5 w", []string{"web", "worker"}},
		{"podvisor nosuch ''", nil},
	}
	for _, tt := range tests {
		// COMP_WORDS[0] is this test binary, which acts as podvisor.
		prog := `source podvisor.bash
COMP_WORDS=(` + shellQuote(self) + " " + strings.TrimPrefix(tt.line, "podvisor ") + `)
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_podvisor
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "-c", prog)
		cmd.Dir, cmd.Env = dir, shellEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.line, err, out)
		}
		got := strings.Fields(string(out))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: completes %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestFishCompletion(t *testing.T) {
	fish := requireTool(t, "fish")
	dir := completionDir(t)
	var script strings.Builder
	writeFish(&script, compCommands(testCommands()))
	// The script completes "podvisor"; a function of that name runs this
	// test binary as podvisor.
	self, _ := os.Executable()
	prelude := "function podvisor; " + fishQuote(self) + " $argv; end\n"
	if err := os.WriteFile(filepath.Join(dir, "podvisor.fish"), []byte(prelude+script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want []string
	}{
		{"podvisor st", []string{"status", "stop", "start"}},
		{"podvisor kube ", []string{"down", "generate", "play", "ps"}},
		{"podvisor kube generate --shape ", []string{"fat", "sidecars"}},
		{"podvisor graph --format ", []string{"dot", "mermaid", "text"}},
		{"podvisor run --l", []string{"--listen", "--log-format"}},
		{"podvisor completion ", []string{"bash", "fish", "names", "zsh"}},
		{"podvisor restart ", []string{"web", "worker"}},
		{"podvisor restart -c other.yaml ", []string{"web", "worker"}},
		{"podvisor signal ", []string{"web", "worker"}},
		{"podvisor signal web ", completionSignals},
		{"podvisor signal --timeout 5s web U", []string{"USR1", "USR2"}},
		{"podvisor signal web HUP ", nil},
		{"podvisor help ", nil}, // filled below
	}
	tests[len(tests)-1].want = commandWords()
	for _, tt := range tests {
		cmd := exec.Command(fish, "--no-config", "-c", "source podvisor.fish; complete -C "+fishQuote(tt.line))
		cmd.Dir, cmd.Env = dir, shellEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if w, _, _ := strings.Cut(l, "\t"); w != "" {
				got = append(got, w)
			}
		}
		want := slices.Clone(tt.want)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: completes %q, want %q", tt.line, got, want)
		}
	}
}

// TestZshCompletion runs the zsh function with compadd, _describe and
// _files replaced by functions that print what would be offered.
func TestZshCompletion(t *testing.T) {
	zsh := requireTool(t, "zsh")
	dir := completionDir(t)
	var script strings.Builder
	writeZsh(&script, compCommands(testCommands()))
	if err := os.WriteFile(filepath.Join(dir, "_podvisor"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	tests := []struct {
		line string
		want []string
	}{
		{"podvisor ''", []string{"run", "check", "import", "graph", "mcp", "status", "timeline", "wait", "restart", "stop", "start", "signal", "reload", "exec", "down", "logs", "attach", "ui", "kube", "schema", "completion", "version", "help"}},
		{"podvisor kube ''", []string{"play", "ps", "down", "generate"}},
		{"podvisor graph --format ''", []string{"text", "dot", "mermaid"}},
		{"podvisor status -", []string{"--addr", "--json", "-o", "--pod"}},
		{"podvisor run -c ''", []string{"FILES"}},
		{"podvisor run --config ''", []string{"FILES"}},
		{"podvisor restart ''", []string{"web", "worker"}},
		{"podvisor restart --config other.yaml ''", []string{"web", "worker"}},
		{"podvisor signal ''", []string{"web", "worker"}},
		{"podvisor signal web ''", completionSignals},
		{"podvisor signal --control /tmp/x.sock web ''", completionSignals},
		{"podvisor signal web HUP ''", nil},
	}
	for _, tt := range tests {
		prog := `compdef() { :; }
compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
_describe() { local -a c; c=("${(@P)${@[-1]}}"); print -l -- "${c[@]%%:*}"; }
_files() { print FILES; }
source ./_podvisor
words=(` + shellQuote(self) + " " + strings.TrimPrefix(tt.line, "podvisor ") + `)
CURRENT=${#words}
_podvisor`
		cmd := exec.Command(zsh, "-f", "-c", prog)
		cmd.Dir, cmd.Env = dir, shellEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.line, err, out)
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: offers %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestCompletionNames(t *testing.T) {
	dir := completionDir(t)
	code, out, errOut := runMain("completion", "names", "-c", filepath.Join(dir, "procs.yaml"))
	if code != exitOK || out != "web\nworker\n" {
		t.Errorf("completion names: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runMain("completion", "names", "-c", filepath.Join(dir, "missing.yaml"))
	if code != exitUsage || out != "" {
		t.Errorf("completion names on a missing file: exit %d, %q", code, out)
	}
	for _, sh := range shellNames() {
		code, out, _ := runMain("completion", sh)
		if code != exitOK || !strings.Contains(out, "podvisor") || !strings.Contains(out, "log-format") {
			t.Errorf("completion %s: exit %d", sh, code)
		}
	}
}
