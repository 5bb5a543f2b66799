package importer

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixture is one input of testdata converted by the pure converters, with
// relative paths so that the golden files do not depend on the checkout.
type fixture struct {
	name    string
	convert func(t *testing.T) (*Model, *Report, error)
}

func readSource(t testing.TB, p string) Source {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return Source{Path: p, Data: data}
}

// treeSources reads every regular file under dir, with relative paths.
func treeSources(t testing.TB, dir string) []Source {
	t.Helper()
	var out []Source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		out = append(out, readSource(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fixtures() []fixture {
	return []fixture{
		{"supervisord", func(t *testing.T) (*Model, *Report, error) {
			return ConvertSupervisord(readSource(t, "testdata/supervisord/supervisord.conf"), includeGlob, Options{})
		}},
		{"supervisord-priority", func(t *testing.T) (*Model, *Report, error) {
			return ConvertSupervisord(readSource(t, "testdata/supervisord/supervisord.conf"), includeGlob, Options{PriorityOrder: true})
		}},
		{"supervisord-typos", func(t *testing.T) (*Model, *Report, error) {
			return ConvertSupervisord(readSource(t, "testdata/supervisord/typos.conf"), includeGlob, Options{})
		}},
		{"supervisord-expand", func(t *testing.T) (*Model, *Report, error) {
			return ConvertSupervisord(readSource(t, "testdata/supervisord-expand/supervisord.conf"), includeGlob, Options{})
		}},
		{"supervisord-listener", func(t *testing.T) (*Model, *Report, error) {
			return ConvertSupervisord(readSource(t, "testdata/supervisord-listener/supervisord.conf"), includeGlob, Options{})
		}},
		{"procfile-crlf", func(t *testing.T) (*Model, *Report, error) {
			return ConvertProcfile(readSource(t, "testdata/procfile/Procfile.crlf"), nil, Options{})
		}},
		{"process-compose", func(t *testing.T) (*Model, *Report, error) {
			return ConvertProcessCompose(readSource(t, "testdata/process-compose/process-compose.yaml"), Options{})
		}},
		{"process-compose-anchors", func(t *testing.T) (*Model, *Report, error) {
			return ConvertProcessCompose(readSource(t, "testdata/process-compose/anchors.yaml"), Options{})
		}},
		{"process-compose-vars", func(t *testing.T) (*Model, *Report, error) {
			return ConvertProcessCompose(readSource(t, "testdata/process-compose-vars/process-compose.yaml"), Options{})
		}},
		{"process-compose-dotenv", func(t *testing.T) (*Model, *Report, error) {
			env := readSource(t, "testdata/process-compose-dotenv/.env")
			return ConvertProcessCompose(readSource(t, "testdata/process-compose-dotenv/process-compose.yaml"), Options{DotEnv: &env})
		}},
		{"process-compose-edge", func(t *testing.T) (*Model, *Report, error) {
			return ConvertProcessCompose(readSource(t, "testdata/process-compose-edge/process-compose.yaml"), Options{})
		}},
		{"process-compose-extends", func(t *testing.T) (*Model, *Report, error) {
			env := readSource(t, "testdata/process-compose-extends/.env")
			return ConvertProcessCompose(readSource(t, "testdata/process-compose-extends/process-compose.yaml"), Options{DotEnv: &env})
		}},
		{"procfile", func(t *testing.T) (*Model, *Report, error) {
			env := readSource(t, "testdata/procfile/.env")
			return ConvertProcfile(readSource(t, "testdata/procfile/Procfile"), &env, Options{ReleaseFirst: true})
		}},
		{"procfile-dev", func(t *testing.T) (*Model, *Report, error) {
			return ConvertProcfile(readSource(t, "testdata/procfile/Procfile.dev"), nil, Options{})
		}},
		{"s6", func(t *testing.T) (*Model, *Report, error) {
			return ConvertS6(treeSources(t, "testdata/s6"), Options{})
		}},
		{"s6-execline", func(t *testing.T) (*Model, *Report, error) {
			return ConvertS6(treeSources(t, "testdata/s6"), Options{HasExecline: true})
		}},
		{"s6-v2", func(t *testing.T) (*Model, *Report, error) {
			return ConvertS6(treeSources(t, "testdata/s6-v2"), Options{})
		}},
		{"systemd", func(t *testing.T) (*Model, *Report, error) {
			var units []Source
			for _, n := range []string{"app.service", "cache.service", "migrate.service", "shop.target"} {
				units = append(units, readSource(t, "testdata/systemd/"+n))
			}
			return ConvertSystemd(units, Options{})
		}},
		{"systemd-dropin-instance", func(t *testing.T) (*Model, *Report, error) {
			worker := readSource(t, "testdata/systemd/worker@.service")
			worker.Path = "testdata/systemd/worker@mail.service"
			return ConvertSystemd([]Source{
				readSource(t, "testdata/systemd/app.service"), readSource(t, "testdata/systemd/app.service.d/override.conf"),
				readSource(t, "testdata/systemd/cache.service"), readSource(t, "testdata/systemd/migrate.service"), worker,
			}, Options{})
		}},
		{"systemd-s45", func(t *testing.T) (*Model, *Report, error) {
			dir := "testdata/systemd-s45/"
			queue := readSource(t, dir+"queue@.service")
			queue.Path = dir + "queue@mail-in.service"
			return ConvertSystemd([]Source{
				readSource(t, dir+"relay.service"), readSource(t, dir+"relay.socket"), queue,
				readSource(t, dir+"a-very-long-unit-name-written-by-a-generator-for-one-specific-customer.service"),
			}, Options{ReadFile: RootReader(dir + "root")})
		}},
	}
}

func reportText(r *Report) string {
	var b bytes.Buffer
	r.WriteReport(&b)
	return b.String()
}

// TestGolden converts every fixture and compares the procs.yaml and the
// report with testdata/golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			m, r, err := fx.convert(t)
			if err != nil {
				t.Fatalf("convert: %v", err)
			}
			if r.Failed() {
				t.Errorf("a real-world fixture did not convert:\n%s", reportText(r))
			}
			compareGolden(t, "testdata/golden/"+fx.name+".yaml", config.Write(m))
			compareGolden(t, "testdata/golden/"+fx.name+".report", []byte(reportText(r)))
		})
	}
}

// convertedGolden requires that a conversion worked (no error, nothing
// "not converted") and that its procs.yaml passes check --portable,
// compares the file and the report with testdata/golden/NAME.yaml and
// NAME.report, and returns the file.
func convertedGolden(t *testing.T, name string, m *Model, r *Report, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	if r.Failed() {
		t.Errorf("did not convert:\n%s", reportText(r))
	}
	out := config.Write(m)
	assertPortable(t, out)
	compareGolden(t, "testdata/golden/"+name+".yaml", out)
	compareGolden(t, "testdata/golden/"+name+".report", []byte(reportText(r)))
	return out
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestFixturesPassPortableCheck is the property on the fixtures: what
// import writes passes check --portable, and every approximation in the
// report is visible as a comment in the file.
func TestFixturesPassPortableCheck(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			m, r, err := fx.convert(t)
			if err != nil {
				t.Fatal(err)
			}
			out := config.Write(m)
			assertPortable(t, out)
			for _, p := range m.Processes {
				for key, c := range p.Written.Comments {
					if !bytes.Contains(out, []byte("approximated")) || !bytes.Contains(out, []byte(config.CommentText(c))) {
						t.Errorf("%s.%s: comment %q is not in the file", p.Name, key, c)
					}
				}
			}
			// Every approximation in the report shows in the file: as a
			// comment beside its key, or in the header.
			for _, e := range r.Entries {
				if e.Kind == Approximated && !bytes.Contains(out, []byte(config.CommentText(e.Detail))) {
					t.Errorf("approximation %q (%s) is not in the file", e.Detail, e.What)
				}
			}
		})
	}
}

// assertPortable fails the test when out does not pass check --portable.
func assertPortable(t testing.TB, out []byte) {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := config.ParsePortable(filepath.Join(dir, "procs.yaml"), out, func(string) (string, bool) { return "", false }); err != nil {
		t.Fatalf("import wrote a file that fails check --portable:\n%v\n--- file\n%s", err, out)
	}
}

func parsePortableHere(t testing.TB, out []byte) (*config.Config, []*config.Error, error) {
	t.Helper()
	return config.ParsePortable(filepath.Join(t.TempDir(), "procs.yaml"), out, func(string) (string, bool) { return "", false })
}
