package importer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadDetects runs the file-system side (detection, includes, tree
// walks, drop-ins, template instances) on the fixtures.
func TestLoadDetects(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  Format
		procs int
	}{
		{[]string{"testdata/supervisord/supervisord.conf"}, Supervisord, 5},
		{[]string{"testdata/supervisord"}, Supervisord, 5},
		{[]string{"testdata/supervisord/typos.conf"}, Supervisord, 2},
		{[]string{"testdata/process-compose"}, ProcessCompose, 7}, // docs (disabled) kept in the profile "disabled"
		{[]string{"testdata/process-compose/anchors.yaml"}, ProcessCompose, 2},
		{[]string{"testdata/procfile"}, Procfile, 4},
		{[]string{"testdata/procfile/Procfile.dev"}, Procfile, 2},
		{[]string{"testdata/s6"}, S6, 5},
		{[]string{"testdata/s6/etc/s6-overlay/s6-rc.d"}, S6, 5},
		{[]string{"testdata/s6-v2/etc"}, S6, 4},
		{[]string{"testdata/systemd"}, Systemd, 5},
		{[]string{"testdata/systemd/app.service", "testdata/systemd/migrate.service", "testdata/systemd/cache.service", "testdata/systemd/worker@mail.service"}, Systemd, 5},
	} {
		t.Run(strings.Join(tc.paths, ","), func(t *testing.T) {
			m, r, f, err := Load(tc.paths, "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if f != tc.want {
				t.Errorf("detected %s, want %s", f, tc.want)
			}
			if r.Failed() {
				t.Errorf("not converted:\n%s", reportText(r))
			}
			if len(m.Processes) != tc.procs {
				var names []string
				for _, p := range m.Processes {
					names = append(names, p.Name)
				}
				t.Errorf("%d processes %v, want %d", len(m.Processes), names, tc.procs)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		paths []string
		from  Format
		want  string
	}{
		{[]string{filepath.Join(dir, "notes.txt")}, "", "notes.txt: cannot tell the format of this file; give --from"},
		{[]string{filepath.Join(dir, "empty")}, "", "empty: cannot tell the format of this directory"},
		{[]string{filepath.Join(dir, "missing.conf")}, Supervisord, "missing.conf: cannot read: no such file or directory"},
		{[]string{dir}, S6, "no s6-overlay service found"},
		{[]string{"a", "b"}, Supervisord, "give one main file"},
	} {
		_, _, _, err := Load(tc.paths, tc.from, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v, %q) = %v, want an error containing %q", tc.paths, tc.from, err, tc.want)
		}
	}
}

// TestRootReaderStaysInside reads absolute paths under a root and refuses
// every way out: "..", a relative symbolic link climbing above the root,
// an absolute one, and one in a directory on the way.
func TestRootReaderStaysInside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "image")
	mustWrite := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(filepath.Join(root, "etc/app/app.env"), "A=inside\n")
	mustWrite(filepath.Join(base, "secret.env"), "A=outside\n")
	for name, target := range map[string]string{
		"etc/app/up.env":    "../../../secret.env",
		"etc/app/abs.env":   filepath.Join(base, "secret.env"),
		"etc/app/same.env":  "app.env",
		"etc/app/dirlink":   "../../..",
		"etc/app/innerlink": "../app",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	read := RootReader(root)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/etc/app/app.env", true},
		{"/etc/app/same.env", true},
		{"/etc/app/innerlink/app.env", true},
		{"//etc/./app/app.env", true},
		{"/../secret.env", false},
		{"/etc/../../secret.env", false},
		{"/etc/app/../app/app.env", false},
		{"/etc/app/up.env", false},
		{"/etc/app/abs.env", false},
		{"/etc/app/dirlink/secret.env", false},
		{"etc/app/app.env", false},
		{"/etc/app", false},
	} {
		src, err := read(tc.path)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v, want the file under the root", tc.path, err)
		case tc.ok && string(src.Data) != "A=inside\n":
			t.Errorf("%s: read %q, want the file under the root", tc.path, src.Data)
		case !tc.ok && err == nil:
			t.Errorf("%s: read %q, want a refusal", tc.path, src.Data)
		case !tc.ok && !strings.Contains(err.Error(), tc.path):
			t.Errorf("%s: error %q does not name the path", tc.path, err)
		case !tc.ok && tc.path[0] == '/' && tc.path != "/etc/app" && !errors.Is(err, ErrOutsideRoot):
			t.Errorf("%s: error %q is not ErrOutsideRoot", tc.path, err)
		}
	}
}
