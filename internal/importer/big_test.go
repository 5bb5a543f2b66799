package importer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// TestLargeInputsStayFast: the largest inputs the converters accept
// (1000 replicas, each depended on by several processes) convert and check
// in well under a second, so that a fuzzer or a user never waits.
func TestLargeInputsStayFast(t *testing.T) {
	var b strings.Builder
	b.WriteString("processes:\n  db:\n    command: x\n    replicas: 1000\n")
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "  app%d:\n    command: y\n    replicas: 3\n    depends_on:\n      db:\n        condition: process_started\n", i)
	}
	start := time.Now()
	m, r, err := ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(b.String())}, Options{})
	if err != nil || r.Failed() {
		t.Fatalf("%v %v", err, r.Entries)
	}
	if len(m.Processes) != 1015 {
		t.Fatalf("%d processes, want 1015", len(m.Processes))
	}
	assertPortable(t, config.Write(m))
	t.Logf("1015 processes, 15000 dependencies: converted and checked in %v", time.Since(start))
}
