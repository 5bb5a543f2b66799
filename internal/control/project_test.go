package control

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectPath(t *testing.T) {
	env := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return "/run/user/1000"
		}
		return ""
	}
	a := ProjectPath(1000, env, "/srv/a/procs.yaml")
	b := ProjectPath(1000, env, "/srv/b/procs.yaml")
	if a == b || filepath.Dir(a) != "/run/user/1000/podvisor" || !strings.HasPrefix(filepath.Base(a), "project-") {
		t.Errorf("ProjectPath: %q and %q, want two names in /run/user/1000/podvisor", a, b)
	}
	if a != ProjectPath(1000, env, "/srv/a/procs.yaml") {
		t.Errorf("ProjectPath is not a function of the path")
	}
	if got := LogPath(a); got != strings.TrimSuffix(a, ".sock")+".log" {
		t.Errorf("LogPath(%q) = %q", a, got)
	}
}

func TestFindPrefersTheProjectsSocket(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return dir
		}
		return ""
	}
	cfg := filepath.Join(dir, "procs.yaml")
	if err := os.WriteFile(cfg, []byte("processes: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := DefaultPath(os.Geteuid(), env)
	if got := Find(os.Geteuid(), env, cfg); got != def {
		t.Errorf("Find without a project socket = %q, want the default %q", got, def)
	}
	p := ProjectPath(os.Geteuid(), env, cfg)
	if err := PrepareDir(p); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := Find(os.Geteuid(), env, cfg); got != p {
		t.Errorf("Find with the project's socket = %q, want %q", got, p)
	}
	if got := Find(os.Geteuid(), env, filepath.Join(dir, "other.yaml")); got != def {
		t.Errorf("Find for another (missing) config = %q, want the default", got)
	}
}
