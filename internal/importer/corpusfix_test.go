package importer

import (
	"testing"

	"github.com/podvisor/podvisor/internal/config"
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
			if err != nil {
				t.Fatalf("convert: %v", err)
			}
			if r.Failed() {
				t.Errorf("did not convert:\n%s", reportText(r))
			}
			out := config.Write(m)
			assertPortable(t, out)
			compareGolden(t, "testdata/golden/"+fx.name+".yaml", out)
			compareGolden(t, "testdata/golden/"+fx.name+".report", []byte(reportText(r)))
		})
	}
}
