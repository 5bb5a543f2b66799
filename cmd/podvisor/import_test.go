package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportExitCodes(t *testing.T) {
	good := writeTemp(t, "Procfile", "web: python3 -m http.server $PORT\n")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		wantStderr []string
		wantStdout string
	}{
		{"converted", []string{good}, 0, []string{"procfile, 1 process", "converted as is (2):", "PORT=5000", "check --portable: ok"}, "# yaml-language-server: $schema="},
		{"flags after the path", []string{good, "--from", "procfile"}, 0, []string{"check --portable: ok"}, "web:"},
		{"not converted", []string{writeTemp(t, "supervisord.conf", "[program:a]\ndirectory=/srv\n")}, 1,
			[]string{"not converted (2):", "supervisord.conf:1: [program:a]: no command="}, ""},
		{"unreadable", []string{writeTemp(t, "supervisord.conf", "[program:a]\ncommand=x\nthis line is not ini\n")}, 2,
			[]string{"supervisord.conf:3: line \"this line is not ini\" is neither [section] nor key=value"}, ""},
		{"every syntax error", []string{writeTemp(t, "web.service", "[Service]\nExecStart=/bin/web\nnot an assignment\n[Unit\nAfter=x\n")}, 2,
			[]string{"web.service:3: line \"not an assignment\" is not Key=Value", "web.service:4: section header \"[Unit\" has no closing ]"}, ""},
		{"bad yaml", []string{writeTemp(t, "process-compose.yaml", "processes:\n  a: [\n")}, 2,
			[]string{"process-compose.yaml:2: invalid YAML: did not find expected node content"}, ""},
		{"missing", []string{filepath.Join(t.TempDir(), "Procfile")}, 2, []string{"Procfile: cannot read: no such file or directory"}, ""},
		{"unknown format", []string{"--from", "docker-compose", good}, 2, []string{`unknown format "docker-compose"`}, ""},
		{"no path", nil, 2, []string{"give the file or directory to convert"}, ""},
		{"unknown flag after the path", []string{good, "--fromm", "procfile"}, 2, []string{`unknown flag --fromm (did you mean --from?)`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(append([]string{"import"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, stdout)
			}
		})
	}
}

func TestImportOutputFile(t *testing.T) {
	dir := t.TempDir()
	proc := filepath.Join(dir, "app", "Procfile")
	if err := os.MkdirAll(filepath.Dir(proc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proc, []byte("web: ./serve\nrelease: ./migrate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app", ".env"), []byte("A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "procs.yaml")
	code, stdout, stderr := runMain("import", "--release-first", proc, "-o", out)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"env_file: [app/.env]", "release: completed"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %q:\n%s", out, want, data)
		}
	}
	// The written file is a valid config for check, from its own directory.
	if code, _, stderr := runMain("check", "-c", out); code != 0 {
		t.Errorf("check of the imported file: exit %d\n%s", code, stderr)
	}
}

func TestCheckPortable(t *testing.T) {
	p := writeTemp(t, "procs.yaml", "processes:\n  a:\n    command: [\"/opt/only-in-image/bin/a\"]\n    user: no-such-user-podvisor-test\n")
	if code, _, _ := runMain("check", "-c", p); code != 2 {
		t.Errorf("check without --portable: exit %d, want 2 (unknown user)", code)
	}
	code, stdout, stderr := runMain("check", "--portable", "-c", p)
	if code != 0 || !strings.Contains(stdout, "ok: 1 process") {
		t.Errorf("check --portable: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `note: `+p+`:4:11 processes.a.user: unknown user "no-such-user-podvisor-test" on this machine`) {
		t.Errorf("stderr lacks the note:\n%s", stderr)
	}
}

// TestCountsSingular: one process is "1 process", not "1 processes"
// (issue 35), in import's and check's summaries alike.
func TestCountsSingular(t *testing.T) {
	one := writeTemp(t, "Procfile", "web: python3 -m http.server $PORT\n")
	if _, _, stderr := runMain("import", one); !strings.Contains(stderr, "podvisor import: procfile, 1 process\n") {
		t.Errorf("import summary, want \"procfile, 1 process\":\n%s", stderr)
	}
	for _, tc := range []struct{ config, want string }{
		{"processes:\n  a:\n    command: [/bin/true]\n", "ok: 1 process, 1 level\n"},
		{"processes:\n  a:\n    command: [/bin/true]\n  b:\n    command: [/bin/true]\n    depends_on: [a]\n", "ok: 2 processes, 2 levels\n"},
	} {
		if code, stdout, stderr := runMain("check", "-c", writeTemp(t, "procs.yaml", tc.config)); code != 0 || stdout != tc.want {
			t.Errorf("check: exit %d, stdout %q, want %q; stderr:\n%s", code, stdout, tc.want, stderr)
		}
	}
}

// TestCheckTeardownWarning: check prints the teardown chain's warning with
// one "warning: " prefix (run logs it at WARN level without one).
func TestCheckTeardownWarning(t *testing.T) {
	p := writeTemp(t, "procs.yaml", "shutdown_timeout: 1s\nprocesses:\n  a:\n    command: [\"true\"]\n    stop: {timeout: 5s}\n")
	code, _, stderr := runMain("check", "-c", p)
	if want := "warning: stop timeouts along the longest teardown chain a add up to 5s, more than shutdown_timeout 1s\n"; code != 0 || stderr != want {
		t.Errorf("check: exit %d, stderr %q, want %q", code, stderr, want)
	}
}

// TestCheckShellSignalRule: check warns that a signals: rule cannot match
// the death of a shell string's command (the shell exits 128+N; issue 35).
func TestCheckShellSignalRule(t *testing.T) {
	p := writeTemp(t, "procs.yaml", "processes:\n  a:\n    command: \"./crashy\"\n    restart:\n      rules:\n        - {signals: [SEGV], action: restart}\n")
	code, stdout, stderr := runMain("check", "-c", p)
	want := "warning: " + p + ":6:11 processes.a.restart.rules[0]: the command is a shell string without exec: /bin/sh -c reports its death by SIGSEGV as exit code 139"
	if code != 0 || stdout != "ok: 1 process, 1 level\n" || !strings.HasPrefix(stderr, want) {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want the warning %q", code, stdout, stderr, want)
	}
}
