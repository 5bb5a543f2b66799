package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePortable(t *testing.T) {
	src := `processes:
  web:
    command: ["/usr/sbin/nginx-only-in-image", "${PORT_NOT_SET_ANYWHERE}"]
    user: no-such-user-podvisor-test:no-such-group
    env_file: [does-not-exist.env]
    working_dir: /srv/only-in-image
`
	dir := t.TempDir()
	name := dir + "/procs.yaml"
	if _, err := Parse(name, []byte(src), nil); err == nil {
		t.Fatal("Parse accepted a missing user, env file and variable")
	}
	cfg, notes, err := ParsePortable(name, []byte(src), nil)
	if err != nil {
		t.Fatalf("ParsePortable: %v", err)
	}
	if cfg == nil || cfg.Processes["web"] == nil {
		t.Fatal("no config")
	}
	got := FormatNotes(notes)
	for _, want := range []string{
		"procs.yaml:3:", "PORT_NOT_SET_ANYWHERE is not set here",
		"procs.yaml:4:", `unknown user "no-such-user-podvisor-test" on this machine`,
		"procs.yaml:5:", "env_file does-not-exist.env does not exist here",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "note: "); n != 3 {
		t.Errorf("%d notes, want 3:\n%s", n, got)
	}
}

func TestParsePortableEnvFileDirectory(t *testing.T) {
	dir := t.TempDir()
	src := "processes:\n  a:\n    command: x\n    env_file: [" + dir + "]\n"
	_, notes, err := ParsePortable("procs.yaml", []byte(src), nil)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Msg, "cannot be read here") {
		t.Fatalf("err %v, notes %v; want one note that the env_file cannot be read here", err, notes)
	}
	bad := filepath.Join(dir, "bad.env")
	if err := os.WriteFile(bad, []byte("not an assignment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src = "processes:\n  a:\n    command: x\n    env_file: [" + bad + "]\n"
	if _, _, err := ParsePortable("procs.yaml", []byte(src), nil); err == nil {
		t.Fatal("an env_file that exists and does not parse passed --portable")
	}
}

func TestParsePortableStillErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"bad uid", "processes:\n  a:\n    command: x\n    user: \"4294967295\"\n", "invalid uid"},
		{"empty group", "processes:\n  a:\n    command: x\n    user: \"nobody:\"\n", "invalid user"},
		{"unknown key", "processes:\n  a:\n    command: x\n    usr: root\n", "usr"},
		{"bad reference", "processes:\n  a:\n    command: \"${1X}\"\n", "invalid variable reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParsePortable("procs.yaml", []byte(tc.src), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
