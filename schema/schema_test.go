package schema

// The schema is checked against the loader (internal/config), which stays
// the authority:
//   - every example and every config in testdata/good loads and validates;
//   - every config in testdata/bad (one schema matter each: unknown key,
//     wrong type, bad enum or pattern) fails both, the loader with the
//     message named on its first line ("# loader: ...");
//   - the keys and words of each mapping are exactly the loader's
//     (config.Sections, config.Enums);
//   - FuzzLoaderAcceptedValidates: whatever the loader accepts, the schema
//     accepts.
// To add a key: add it to the loader's key list, then to the schema
// (procs.schema.json) and docs/reference.md; these tests say what is missing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

func compile(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSON))
	if err != nil {
		t.Fatalf("procs.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("procs.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("procs.schema.json")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

// toJSON turns a YAML document into the value a YAML-aware editor
// validates: mappings with string keys, scalars by their resolved tag
// (timestamps stay text, as JSON has no dates).
func toJSON(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return nodeValue(doc.Content[0])
}

func nodeValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := nodeValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeValue(c)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			err := n.Decode(&b)
			return b, err
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				// Through the text, so that large integers stay exact.
				return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
			}
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("unsupported YAML node kind %v", n.Kind)
}

func validate(s *jsonschema.Schema, data []byte) error {
	v, err := toJSON(data)
	if err != nil {
		return err
	}
	// The validator wants JSON types: round-trip through encoding/json.
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func lookupEnv(name string) (string, bool) {
	v, ok := map[string]string{"HOME": "/root", "EMPTY": ""}[name]
	return v, ok
}

func TestExamplesValidate(t *testing.T) {
	s := compile(t)
	files, _ := filepath.Glob("../examples/*/procs.yaml")
	if len(files) < 3 {
		t.Fatalf("examples not found: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(s, data); err != nil {
			t.Errorf("%s does not validate:\n%v", f, err)
		}
		// Editors find the schema through this line.
		if !bytes.Contains(data, []byte("# yaml-language-server: $schema=../../schema/procs.schema.json\n")) {
			t.Errorf("%s lacks the yaml-language-server line", f)
		}
	}
}

func TestGoodConfigsValidate(t *testing.T) {
	s := compile(t)
	files, _ := filepath.Glob("testdata/good/*.yaml")
	if len(files) < 3 {
		t.Fatalf("good configs not found: %v", files)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if _, err := config.Parse(f, data, lookupEnv); err != nil {
			t.Errorf("loader refuses %s:\n%v", f, err)
		}
		if err := validate(s, data); err != nil {
			t.Errorf("schema refuses %s:\n%v", f, err)
		}
	}
}

func TestBadConfigsFail(t *testing.T) {
	s := compile(t)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(files) < 40 {
		t.Fatalf("bad configs not found: %v", files)
	}
	files = append(files, "../internal/config/testdata/broken.yaml")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		_, err := config.Parse(f, data, lookupEnv)
		first, _, _ := strings.Cut(string(data), "\n")
		if want, ok := strings.CutPrefix(first, "# loader: "); ok && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: the loader says %v; want %q", f, err, want)
		}
		if err == nil {
			t.Errorf("%s: the loader accepts it", f)
		}
		if err := validate(s, data); err == nil {
			t.Errorf("%s: the schema accepts it", f)
		}
	}
}

// schemaAt returns the object schemas reached from s by path (NAME follows
// additionalProperties), resolving $ref and looking into anyOf and oneOf.
func schemaAt(root map[string]any, path string) []map[string]any {
	cur := expand(root, root)
	if path == "" {
		return cur
	}
	for _, seg := range strings.Split(path, ".") {
		var next []map[string]any
		for _, s := range cur {
			var sub any
			if list, ok := strings.CutSuffix(seg, "[]"); ok {
				// a list of mappings: the items' schema
				if props, ok := s["properties"].(map[string]any); ok {
					if l, ok := props[list].(map[string]any); ok {
						sub = l["items"]
					}
				}
			} else if seg == "NAME" {
				sub = s["additionalProperties"]
			} else if props, ok := s["properties"].(map[string]any); ok {
				sub = props[seg]
			}
			if m, ok := sub.(map[string]any); ok {
				if items, ok := m["items"].(map[string]any); ok {
					m = items // a list's path segment names its elements
				}
				next = append(next, expand(root, m)...)
			}
		}
		cur = next
	}
	return cur
}

// expand resolves s's $ref and returns it and its anyOf/oneOf branches.
func expand(root, s map[string]any) []map[string]any {
	if ref, ok := s["$ref"].(string); ok {
		target := root
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			target, _ = target[p].(map[string]any)
		}
		s = target
	}
	out := []map[string]any{s}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := s[k].([]any)
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok {
				out = append(out, expand(root, m)...)
			}
		}
	}
	return out
}

func rawSchema(t *testing.T) map[string]any {
	var root map[string]any
	if err := json.Unmarshal(JSON, &root); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestSchemaKeysAreLoaderKeys: each mapping's properties are exactly the
// keys the loader accepts there, and each closed mapping refuses others.
func TestSchemaKeysAreLoaderKeys(t *testing.T) {
	root := rawSchema(t)
	for _, sec := range config.Sections() {
		var got []string
		closed := false
		for _, s := range schemaAt(root, sec.Path) {
			props, ok := s["properties"].(map[string]any)
			if !ok {
				continue
			}
			for k := range props {
				got = append(got, k)
			}
			closed = s["additionalProperties"] == false
		}
		want := slices.Clone(sec.Keys)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("schema keys at %q: %v; the loader accepts %v", sec.Path, got, want)
		}
		if !closed {
			t.Errorf("schema at %q does not refuse unknown keys (additionalProperties: false)", sec.Path)
		}
	}
}

// TestSchemaWordsAreLoaderWords: enums are the loader's words; the stop
// signal pattern takes every accepted signal in the forms the loader takes.
func TestSchemaWordsAreLoaderWords(t *testing.T) {
	root := rawSchema(t)
	s := compile(t)
	for _, e := range config.Enums() {
		if e.Path == "processes.NAME.stop.signal" {
			for _, w := range e.Words {
				short := strings.TrimPrefix(w, "SIG")
				for _, form := range []string{w, short, strings.ToLower(w), strings.ToLower(short), " " + w + "\t"} {
					doc := fmt.Sprintf("processes: {a: {command: x, stop: {signal: %q}}}\n", form)
					if err := validate(s, []byte(doc)); err != nil {
						t.Errorf("schema refuses stop.signal %q: %v", form, err)
					}
				}
			}
			for _, bad := range []string{"SIGKILL", "KILL", "SIGSTOP", "SIGTERMX", "15", "SIG"} {
				doc := fmt.Sprintf("processes: {a: {command: x, stop: {signal: %q}}}\n", bad)
				if validate(s, []byte(doc)) == nil {
					t.Errorf("schema accepts stop.signal %q", bad)
				}
			}
			continue
		}
		var got []string
		for _, sc := range schemaAt(root, e.Path) {
			for _, w := range asList(sc["enum"]) {
				if str, ok := w.(string); ok {
					got = append(got, str)
				}
			}
		}
		if !slices.Equal(got, e.Words) {
			t.Errorf("schema words at %s: %v; the loader accepts %v", e.Path, got, e.Words)
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// TestDurationPattern: the schema's durations take what the loader takes.
func TestDurationPattern(t *testing.T) {
	s := compile(t)
	for _, d := range []string{"0", "0s", "10s", "1m30s", "1.5h", ".5s", "1.s", "500ms", "3us", "3µs", "3μs", "+1s", "-0s", " 10s ", "\u00a010s", "0.5h"} {
		doc := fmt.Sprintf("processes: {a: {command: x, start_timeout: %q}}\n", d)
		if _, err := config.Parse("p.yaml", []byte(doc), nil); err != nil {
			t.Errorf("loader refuses %q (fix the test): %v", d, err)
		}
		if err := validate(s, []byte(doc)); err != nil {
			t.Errorf("schema refuses duration %q: %v", d, err)
		}
	}
	for _, d := range []string{"10", "1y", "-1s", "s", "", "1 s", "ten seconds"} {
		doc := fmt.Sprintf("processes: {a: {command: x, start_timeout: %q}}\n", d)
		if validate(s, []byte(doc)) == nil {
			t.Errorf("schema accepts duration %q", d)
		}
	}
}

// FuzzLoaderAcceptedValidates: whatever config the loader accepts, the
// schema accepts (the reverse does not hold: the schema cannot see cycles,
// unknown dependencies, users or files).
func FuzzLoaderAcceptedValidates(f *testing.F) {
	var files []string
	for _, g := range []string{"../examples/*/procs.yaml", "testdata/good/*.yaml", "testdata/bad/*.yaml", "../internal/config/testdata/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	s := compile(f)
	// Parse in testdata/good, so that relative env_file names resolve.
	name := filepath.Join("testdata", "good", "procs.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := config.Parse(name, data, lookupEnv); err != nil {
			return
		}
		if err := validate(s, data); err != nil {
			t.Fatalf("the loader accepts this config, the schema refuses it:\n%s\n%v", data, err)
		}
	})
}

// TestMutatedConfigs is a deterministic form of the property above: each
// good config with one scalar at a time replaced by other values of many
// kinds; every variant the loader accepts must validate.
func TestMutatedConfigs(t *testing.T) {
	s := compile(t)
	values := []string{"0", "1", "-1", "0s", "-0s", "1.5", "true", "yes", "~", `""`, `" "`, "x", "2001-01-01",
		"fd:3", "fd:0003", "systemd", "term", "SIGTERM", "ſigterm", `"10s "`, "[]", "{}", "[x]", "0x10", "1e3", ".inf",
		"on-failure", "oneshot", "job", "completed", "started", "json", "off", `"h:1"`, `"http://h/"`, `"${HOME}"`, `"${NOPE:-}"`}
	scalar := regexp.MustCompile(`(:\s+)([^\s{}\[\],#][^,}\]\n#]*?|\{\}|\[\])(\s*[,}\]\n])`)
	files, _ := filepath.Glob("testdata/good/*.yaml")
	accepted := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		locs := scalar.FindAllSubmatchIndex(data, -1)
		for _, loc := range locs {
			for _, v := range values {
				mutated := slices.Concat(data[:loc[4]], []byte(v), data[loc[5]:])
				if _, err := config.Parse(f, mutated, lookupEnv); err != nil {
					continue
				}
				accepted++
				if err := validate(s, mutated); err != nil {
					t.Errorf("%s with %q at byte %d: the loader accepts, the schema refuses:\n%s\n%v", f, v, loc[4], mutated, err)
				}
			}
		}
	}
	if accepted < 100 {
		t.Errorf("only %d mutations were accepted by the loader: the mutation is broken", accepted)
	}
}

// TestSchemaExactWhereItCan: for values whose rules the schema can express
// fully, the schema and the loader give the same verdict, so an editor
// flags exactly what podvisor check would.
func TestSchemaExactWhereItCan(t *testing.T) {
	s := compile(t)
	proc := func(kv string) string { return "processes:\n  a: {command: x, " + kv + "}\n" }
	docs := []string{
		proc(`ready: {notify: "fd:3"}`), proc(`ready: {notify: "fd:1023"}`), proc(`ready: {notify: "fd:1024"}`),
		proc(`ready: {notify: "fd:0"}`), proc(`ready: {notify: "fd:0007"}`), proc(`ready: {notify: "fd:x"}`),
		proc(`ready: {notify: systemd}`), proc(`ready: {notify: Systemd}`),
		proc(`stop: {signal: sigusr1}`), proc(`stop: {signal: "Sig Term"}`), proc(`stop: {signal: ALRM}`), proc(`stop: {signal: SIGSTOP}`),
		proc(`start_timeout: 0`), proc(`start_timeout: "0"`), proc(`start_timeout: 1h`), proc(`start_timeout: "-0.0s"`), proc(`start_timeout: -1ms`),
		proc(`start_timeout: 1.5`), proc(`start_timeout: 5m5`),
		proc(`success_exit_codes: [0, 255]`), proc(`success_exit_codes: [256]`), proc(`success_exit_codes: [1.5]`),
		proc(`restart: {limit: 2147483647}`), proc(`restart: {limit: 2147483648}`),
		proc(`type: job`), proc(`type: Job`), proc(`restart: on_failure`),
		proc(`env: {_A1: x}`), proc(`env: {A-B: x}`), proc(`env: {A: [x]}`),
		proc(`depends_on: []`), proc(`depends_on: {}`),
		proc(`ready: {tcp: "h:1", success_threshold: 1}`), proc(`ready: {tcp: "h:1", failure_threshold: 0}`),
		"processes:\n  " + strings.Repeat("a", 63) + ": {command: x}\n",
		"processes:\n  " + strings.Repeat("a", 64) + ": {command: x}\n",
		"processes:\n  a.b_c-d: {command: x}\n", "processes:\n  _a: {command: x}\n",
		// (version: 1.0 is the one known gap: JSON has one number type, so
		// 1.0 is 1 to the schema, while the loader wants 1 written as 1.)
		"version: \"1\"\nprocesses: {a: {command: x}}\n", "version: 2\nprocesses: {a: {command: x}}\n",
		"log: {format: JSON}\nprocesses: {a: {command: x}}\n",
		proc(`resources: {cpu: {weight: 10000}}`), proc(`resources: {cpu: {weight: 10001}}`),
		proc(`resources: {pids: {max: 4194304}}`), proc(`resources: {pids: {max: 0}}`),
		proc(`resources: {cpu: {max: 0.5}}`), proc(`resources: {cpu: {max: "+.5"}}`), proc(`resources: {cpu: {max: "2e-1"}}`),
		proc(`resources: {cpu: {max: 1K}}`), proc(`resources: {cpu: {max: -1}}`), proc(`resources: {cpu: {max: "1 "}}`),
	}
	for _, doc := range docs {
		_, lerr := config.Parse("procs.yaml", []byte(doc), lookupEnv)
		serr := validate(s, []byte(doc))
		if (lerr == nil) != (serr == nil) {
			t.Errorf("loader and schema disagree on\n%sloader: %v\nschema: %v", doc, lerr, serr)
		}
	}
}
