package graph

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// sample is a small pod: a oneshot migration, two services with readiness,
// one service depending on all of them and a job at the end. Names hold the
// '.' and '-' that DOT and Mermaid ids must cope with.
func sample(t *testing.T) (*Graph, map[string]string) {
	t.Helper()
	kinds := map[string]string{
		"db":          "service",
		"cache.redis": "service",
		"migrate":     "oneshot",
		"web-app":     "service",
		"report":      "job",
	}
	edges := []Edge{
		{From: "migrate", To: "db", Cond: Ready},
		{From: "web-app", To: "migrate", Cond: Completed},
		{From: "web-app", To: "cache.redis", Cond: Ready},
		{From: "report", To: "web-app", Cond: Started},
		{From: "report", To: "db", Cond: Ready},
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	return mustNew(t, names, edges), kinds
}

var renderers = []struct {
	name  string
	write func(*bytes.Buffer, *Graph, map[string]string) error
}{
	{"text", func(b *bytes.Buffer, g *Graph, k map[string]string) error { return WriteText(b, g, k) }},
	{"dot", func(b *bytes.Buffer, g *Graph, k map[string]string) error { return WriteDOT(b, g, k) }},
	{"mermaid", func(b *bytes.Buffer, g *Graph, k map[string]string) error { return WriteMermaid(b, g, k) }},
}

func TestRenderGolden(t *testing.T) {
	g, kinds := sample(t)
	for _, r := range renderers {
		t.Run(r.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := r.write(&b, g, kinds); err != nil {
				t.Fatalf("write: %v", err)
			}
			path := filepath.Join("testdata", r.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

// TestRenderQuoting uses names that would break unquoted or unescaped
// output; the config rules forbid them, but the renderers must not rely on
// that.
func TestRenderQuoting(t *testing.T) {
	odd := `we"ird\name`
	g := mustNew(t, []string{odd, "1.x-y"}, []Edge{dep(odd, "1.x-y")})

	var b bytes.Buffer
	if err := WriteDOT(&b, g, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"we\"ird\\name" [shape=box];`, `"1.x-y" [shape=box];`, `"we\"ird\\name" -> "1.x-y" [label="ready"];`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("DOT lacks %s:\n%s", want, b.String())
		}
	}

	b.Reset()
	if err := WriteMermaid(&b, g, nil); err != nil {
		t.Fatal(err)
	}
	// Ids are n<index>; labels are quoted with '"' escaped as an entity.
	for _, want := range []string{`n0["1.x-y"]`, `n1["we#quot;ird\name"]`, `n1 -->|ready| n0`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Mermaid lacks %s:\n%s", want, b.String())
		}
	}
	id := regexp.MustCompile(`^n[0-9]+$`)
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		f := strings.Fields(line)
		if f[0] == "%%" {
			continue
		}
		if strings.Contains(line, "-->") {
			if !id.MatchString(f[0]) || !id.MatchString(f[2]) {
				t.Errorf("edge line %q has a non-sanitised id", line)
			}
			continue
		}
		if i := strings.IndexAny(line, `[({`); i < 0 || !id.MatchString(strings.TrimSpace(line[:i])) {
			t.Errorf("node line %q has a non-sanitised id", line)
		}
	}
}

func TestRenderShapesByKind(t *testing.T) {
	g := mustNew(t, []string{"s", "o", "j", "u"}, nil)
	kinds := map[string]string{"s": "service", "o": "oneshot", "j": "job"} // u: default
	var b bytes.Buffer
	if err := WriteDOT(&b, g, kinds); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"s" [shape=box]`, `"o" [shape=ellipse]`, `"j" [shape=doubleoctagon]`, `"u" [shape=box]`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("DOT lacks %s:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteMermaid(&b, g, kinds); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`n0{{"j"}}`, `n1(["o"])`, `n2["s"]`, `n3["u"]`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Mermaid lacks %s:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteText(&b, g, kinds); err != nil {
		t.Fatal(err)
	}
	want := "level 0\n  j   job\n  o   oneshot\n  s   service\n  u   service\n"
	if b.String() != want {
		t.Errorf("text = %q, want %q", b.String(), want)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestRenderWriteError(t *testing.T) {
	g, kinds := sample(t)
	boom := errors.New("boom")
	for _, r := range []struct {
		name  string
		write func() error
	}{
		{"text", func() error { return WriteText(failWriter{boom}, g, kinds) }},
		{"dot", func() error { return WriteDOT(failWriter{boom}, g, kinds) }},
		{"mermaid", func() error { return WriteMermaid(failWriter{boom}, g, kinds) }},
	} {
		if err := r.write(); !errors.Is(err, boom) {
			t.Errorf("%s: error = %v, want %v", r.name, err, boom)
		}
	}
}
