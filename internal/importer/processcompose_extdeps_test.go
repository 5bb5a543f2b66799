package importer

import (
	"slices"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// TestProcessComposeUnknownDependency: a depends_on naming no process of
// the file is left out and said (file header and report, with the devbox
// plugin it may come from), the other dependencies kept; one a typo away
// from a process of the file is refused naming that process, as
// process-compose refuses it.
func TestProcessComposeUnknownDependency(t *testing.T) {
	conv := func(deps string) (*Model, *Report) {
		src := Source{Path: "process-compose.yaml", Data: []byte("version: \"0.5\"\nprocesses:\n  migrate:\n    command: bin/migrate\n  web:\n    command: bin/web\n    depends_on:\n" + deps)}
		m, r, err := ConvertProcessCompose(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m, r
	}

	m, r := conv("      redis:\n        condition: process_started\n      migrate:\n        condition: process_completed_successfully\n")
	if r.Failed() {
		t.Fatalf("refused:\n%s", reportText(r))
	}
	web := m.Process("web")
	if got := web.DependsOn; len(got) != 1 || got[0].Name != "migrate" {
		t.Errorf("depends_on %+v, want migrate only", got)
	}
	out := string(config.Write(m))
	want := "approximated: process-compose.yaml:8: web.depends_on.redis: no process named redis in this file: left out"
	if !strings.Contains(out, "# "+want) || !strings.Contains(reportText(r), strings.TrimPrefix(want, "approximated: ")) {
		t.Errorf("the left-out dependency is not said in the file and the report:\n%s\n%s", out, reportText(r))
	}
	if !strings.Contains(reportText(r), "devbox's redis plugin") {
		t.Errorf("no hint of devbox's redis plugin:\n%s", reportText(r))
	}
	assertPortable(t, []byte(out))

	_, r = conv("      migrat:\n        condition: process_completed_successfully\n")
	if !r.Failed() || !slices.ContainsFunc(r.Entries, func(e Entry) bool {
		return e.Kind == Failed && strings.Contains(e.Detail, "did you mean migrate?")
	}) {
		t.Errorf("a typo of a process's name was not refused with the name it means:\n%s", reportText(r))
	}
}
