package importer

import (
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
		{[]string{"testdata/process-compose"}, ProcessCompose, 6},
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
