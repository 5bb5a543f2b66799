package config

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGoldenBroken checks the full formatted error list for a config with
// many problems: what `podvisor check` prints.
func TestGoldenBroken(t *testing.T) {
	const in, golden = "testdata/broken.yaml", "testdata/broken.golden"
	_, err := Load(in, env(nil))
	if err == nil {
		t.Fatal("Load accepted a broken config")
	}
	got := err.Error() + "\n"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\ngot:\n%swant:\n%s", golden, got, want)
	}
	// Each line of the input marked "bad" yields an error on that line.
	lines := strings.Split(got, "\n")
	src, _ := os.ReadFile(in)
	for i, line := range strings.Split(string(src), "\n") {
		if !strings.Contains(line, "# bad") {
			continue
		}
		prefix := in + ":" + strconv.Itoa(i+1) + ":"
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, prefix)
		}
		if !found {
			t.Errorf("no error reported for line %d: %s", i+1, line)
		}
	}
}
