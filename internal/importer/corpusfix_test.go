package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusFixtures are inputs shaped like the real configurations that the
// corpus measurement (test/e2e/corpus_test.go) found the import getting
// wrong; each is written for its bug, not copied from the corpus.
func corpusFixtures() []fixture {
	return []fixture{
		{"corpus-supervisord-rootinclude", func(t *testing.T) (*Model, *Report, error) {
			root := "testdata/corpus-fix/supervisord-rootinclude/root"
			opt := Options{Root: root, ReadFile: RootReader(root)}
			return ConvertSupervisord(readSource(t, root+"/etc/supervisord.conf"), supervisordInclude(opt), opt)
		}},
		{"corpus-systemd-envcomment", func(t *testing.T) (*Model, *Report, error) {
			return ConvertSystemd([]Source{readSource(t, "testdata/corpus-fix/systemd-envcomment/relay.service")}, Options{})
		}},
	}
}

// TestCorpusGolden converts each corpus fixture, requires that it converts
// (nothing "not converted") and passes check --portable, and compares the
// procs.yaml and the report with testdata/golden.
func TestCorpusGolden(t *testing.T) {
	for _, fx := range corpusFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			m, r, err := fx.convert(t)
			convertedGolden(t, fx.name, m, r, err)
		})
	}
}

// TestSupervisordIncludeOutsideRoot: an [include] under --root whose
// symbolic link leads out of the root is not converted (named, with the
// root), and nothing outside is read.
func TestSupervisordIncludeOutsideRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "etc", "conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(root, "etc", "supervisord.conf")
	if err := os.WriteFile(main, []byte("[include]\nfiles = /etc/conf.d/*.conf\n\n[program:ok]\ncommand=/bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outside.conf"), []byte("[program:secret]\ncommand=/bin/false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../outside.conf", filepath.Join(root, "etc", "conf.d", "a.conf")); err != nil {
		t.Fatal(err)
	}
	opt := Options{Root: root, ReadFile: RootReader(root)}
	m, r, err := ConvertSupervisord(readSource(t, main), supervisordInclude(opt), opt)
	if err != nil {
		t.Fatalf("want a report line, not a parse error: %v", err)
	}
	text := reportText(r)
	if !r.Failed() || !strings.Contains(text, "leads outside --root") || !strings.Contains(text, root) {
		t.Errorf("report does not refuse the include naming the root:\n%s", text)
	}
	for _, p := range m.Processes {
		if p.Name == "secret" {
			t.Errorf("a program outside --root was read")
		}
	}
}
