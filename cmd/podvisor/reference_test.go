package main

// These tests keep docs/reference.md true, deriving every list from the
// code, never from a list written here:
//
//   - commands and flags come from the command table (commands.go);
//   - procs.yaml keys and words come from config.Sections and config.Enums,
//     which are the key lists the loader itself checks with;
//   - metrics come from what /metrics serves (server.Metrics).
//
// To add a command: add its entry to commands and a section headed
// "### `podvisor NAME`" under "## Commands" in docs/reference.md that names
// each of its flags in backticks (`--flag`, `-c`).
// To add a config key: add it to the loader's key list (internal/config),
// a row "| `full.path.of.key` | type | default | example | meaning |" to a
// "| Key |" table in docs/reference.md, and the key to
// schema/procs.schema.json (schema's tests check that).
// To add a metric: add a row "| `name` | type | meaning |" to the Metrics table.

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

const referencePath = "../../docs/reference.md"

func readReference(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// chapter returns the text of the "## title" chapter.
func chapter(t *testing.T, doc, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("reference has no chapter %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// sections splits text at "### " headings, by heading.
func sections(text string) map[string]string {
	out := map[string]string{}
	parts := strings.Split("\n"+text, "\n### ")
	for _, p := range parts[1:] {
		head, body, _ := strings.Cut(p, "\n")
		out[head] = body
	}
	return out
}

func TestReferenceCommands(t *testing.T) {
	secs := sections(chapter(t, readReference(t), "Commands"))
	documented := map[string]bool{}
	for head := range secs {
		name, ok := strings.CutPrefix(head, "`podvisor ")
		if !ok {
			t.Errorf("unexpected heading %q in Commands: want ### `podvisor NAME`", head)
			continue
		}
		documented[strings.TrimSuffix(name, "`")] = true
	}
	for _, c := range commands {
		body, ok := secs["`podvisor "+c.name+"`"]
		if !ok {
			t.Errorf("command %q has no section \"### `podvisor %s`\" in docs/reference.md", c.name, c.name)
			continue
		}
		delete(documented, c.name)
		if !strings.Contains(body, "podvisor "+c.name) {
			t.Errorf("section of %q shows no usage", c.name)
		}
		// The synopsis comes from the flag definitions (synopsis, help.go);
		// the reference shows the same line.
		if syn := strings.TrimSpace("podvisor " + c.name + " " + synopsis(c)); !strings.Contains(body, syn+"\n") {
			t.Errorf("section of %q lacks the synopsis line %q (help's, from the flag definitions)", c.name, syn)
		}
		for _, f := range flagHelp(c) {
			for _, n := range f.all {
				if !strings.Contains(body, "`"+dashed(n)) {
					t.Errorf("flag %s of %q is not in its section of docs/reference.md", dashed(n), c.name)
				}
			}
		}
	}
	for name := range documented {
		t.Errorf("docs/reference.md documents %q, which is not a command", name)
	}
}

// splitRow splits a Markdown table row into its cells (\| is not a split).
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var cells []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\':
			i++ // \| is a literal |
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(row[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(row[start:]))
}

// tableRows returns the rows of every table whose header's first cell is
// first, by their first cell with its backticks removed.
func tableRows(doc, first string) map[string][]string {
	out := map[string][]string{}
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := splitRow(line)
		switch {
		case cells[0] == first:
			in = true
		case !in || strings.HasPrefix(cells[0], "---"):
		default:
			out[strings.Trim(cells[0], "`")] = cells
		}
	}
	return out
}

func TestReferenceKeys(t *testing.T) {
	rows := tableRows(readReference(t), "Key")
	want := map[string]bool{}
	allowed := map[string]bool{}
	for _, s := range config.Sections() {
		if s.Path != "" {
			allowed[s.Path] = true // a mapping may have a row of its own
		}
		for _, k := range s.Keys {
			p := k
			if s.Path != "" {
				p = s.Path + "." + k
			}
			want[p] = true
		}
	}
	if len(want) < 40 {
		t.Fatalf("only %d keys derived from config.Sections", len(want))
	}
	for k := range want {
		if _, ok := rows[k]; !ok {
			t.Errorf("key %s is accepted by the loader but has no row in docs/reference.md", k)
		}
	}
	for k, cells := range rows {
		if !want[k] && !allowed[k] {
			t.Errorf("docs/reference.md has a row for %s, which the loader does not accept", k)
		}
		if len(cells) != 5 || cells[1] == "" || cells[3] == "" || cells[4] == "" {
			t.Errorf("row %s: want Key | Type | Default | Example | Meaning, with a type, an example and a meaning: %q", k, cells)
		}
	}
	for _, e := range config.Enums() {
		cells, ok := rows[e.Path]
		if !ok {
			continue // reported above
		}
		row := strings.Join(cells, " | ")
		for _, w := range e.Words {
			if !strings.Contains(row, "`"+w+"`") {
				t.Errorf("row %s does not name the value `%s`", e.Path, w)
			}
		}
	}
}

func TestReferenceMetrics(t *testing.T) {
	rows := tableRows(readReference(t), "Metric")
	m := server.NewMetrics()
	m.ProbeObserved("app", "ready", time.Millisecond, false)
	code := 1
	snap := supervisor.Snapshot{Phase: "running", Processes: []supervisor.ProcessSnapshot{{
		Name: "app", Type: "service", State: "running", ExitCode: &code, StartDuration: time.Second,
	}}}
	body, errs := m.Scrape(func() supervisor.Snapshot { return snap })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var served []string
	for line := range strings.Lines(string(body)) {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "#" || f[1] != "TYPE" || !strings.HasPrefix(f[2], "podvisor_") {
			continue
		}
		served = append(served, f[2])
		if _, ok := rows[f[2]]; !ok {
			t.Errorf("metric %s is served but not in the Metrics table of docs/reference.md", f[2])
		}
	}
	if len(served) < 8 {
		t.Errorf("only %d podvisor metrics gathered: %v", len(served), served)
	}
	for name := range rows {
		if !strings.HasPrefix(name, "podvisor_") {
			t.Errorf("metric row %q: want a podvisor_ metric", name)
		}
		// Metrics of other parts (collected only with live processes) may
		// be absent from this gather; those of server.Metrics may not.
		if strings.HasPrefix(name, "podvisor_probe_") || slices.Contains([]string{"podvisor_ready"}, name) {
			if !slices.Contains(served, name) {
				t.Errorf("docs/reference.md lists %s, which is not served", name)
			}
		}
	}
}

// TestReadmeDocsInsideRepository: the README's documentation list links
// only to files in the repository.
func TestReadmeDocsInsideRepository(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, docs, ok := strings.Cut(string(b), "\n## Documentation\n")
	if !ok {
		t.Fatal("README.md has no Documentation section")
	}
	if i := strings.Index(docs, "\n## "); i >= 0 {
		docs = docs[:i]
	}
	links := regexp.MustCompile(`\]\(([^)#]+)`).FindAllStringSubmatch(docs, -1)
	if len(links) < 3 || !strings.Contains(docs, "(docs/reference.md)") {
		t.Fatalf("README's documentation list does not link docs/reference.md: %q", docs)
	}
	for _, l := range links {
		if _, err := os.Stat("../../" + l[1]); err != nil || strings.Contains(l[1], "..") || strings.Contains(l[1], "://") {
			t.Errorf("README links %s, which is not a file in the repository", l[1])
		}
	}
	if strings.Contains(docs, "SPEC") || strings.Contains(docs, "shared/") {
		t.Error("README's documentation list points outside the repository")
	}
}
