package importer

import (
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// TestGoldenSystemdKeys converts a unit with the keys whose drop reasons
// used to be a catch-all: ExecReload= becomes reload:, exit statuses with
// signal names become rules' signals and success codes, and every key
// still dropped says why.
func TestGoldenSystemdKeys(t *testing.T) {
	m, r, err := ConvertSystemd([]Source{readSource(t, "testdata/systemd-keys/mailer.service")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed() {
		t.Errorf("did not convert:\n%s", reportText(r))
	}
	for _, e := range r.Entries {
		if e.Kind == Dropped && (e.Detail == "no podvisor equivalent" || e.Detail == "") {
			t.Errorf("%s dropped without a reason of its own", e.What)
		}
	}
	out := config.Write(m)
	assertPortable(t, out)
	compareGolden(t, "testdata/golden/systemd-keys.yaml", out)
	compareGolden(t, "testdata/golden/systemd-keys.report", []byte(reportText(r)))
}
