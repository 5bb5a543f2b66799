package openapitest_test

// The OpenAPI document (schema/openapi.json) is checked three ways here,
// in a package of its own so that fuzzing package schema does not compile
// the validator (libopenapi) with coverage instrumentation (minutes):
//   - it is a valid OpenAPI 3.1 document (libopenapi-validator) whose
//     component schemas all compile (JSON Schema 2020-12);
//   - each component has exactly the JSON fields of the Go type that is
//     sent on the wire, required where the field has no omitempty, and the
//     words of ProcessState, Phase and ProcessType are the supervisor's and
//     the loader's;
//   - every route registered in the code is a path of the document and
//     every path of the document is registered (TestOpenAPIRoutes).
// Live answers are checked against it in test/e2e (openapi_test.go there).
// A new /status field or state is one line in openapi.json; these tests
// name the line that is missing.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/supervisor"
	"github.com/podvisor/podvisor/internal/webui"
	"github.com/podvisor/podvisor/schema"
	"github.com/podvisor/podvisor/schema/openapitest"
)

type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Enum       []string                   `json:"enum"`
		} `json:"schemas"`
	} `json:"components"`
}

func readDocument(t *testing.T) document {
	t.Helper()
	var d document
	if err := json.Unmarshal(schema.OpenAPI, &d); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return d
}

func TestOpenAPIIsValid(t *testing.T) {
	d, err := openapitest.New()
	if err != nil {
		t.Fatal(err)
	}
	if ok, errs := d.Validator().ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("openapi.json: %s: %s", e.Message, e.Reason)
			for _, s := range e.SchemaValidationErrors {
				t.Errorf("  %s: %s", s.FieldPath, s.Reason)
			}
		}
	}
	// The OpenAPI meta-schema lets any schema object through: each is
	// compiled as JSON Schema 2020-12, which refuses a misspelt type.
	var raw any
	if err := json.Unmarshal(schema.OpenAPI, &raw); err != nil {
		t.Fatal(err)
	}
	pointers := schemaPointers(raw, "#")
	if len(pointers) < 40 {
		t.Fatalf("found only %d schemas in openapi.json", len(pointers))
	}
	for _, p := range pointers {
		if _, err := d.Schema(p); err != nil {
			t.Error(err)
		}
	}
}

// schemaPointers lists the JSON pointers of the schemas in v: each value of
// a "schema" key and each component schema.
func schemaPointers(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			p := at + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			if k == "schema" || strings.HasSuffix(at, "/components/schemas") {
				out = append(out, p)
				continue
			}
			out = append(out, schemaPointers(c, p)...)
		}
	case []any:
		for i, c := range v {
			out = append(out, schemaPointers(c, at+"/"+strconv.Itoa(i))...)
		}
	}
	return out
}

// The wire types, by the component that describes them: package api's,
// which the server marshals (internal/server, internal/timeline and
// internal/control alias them) and the client decodes.
var wireTypes = map[string]any{
	"Status":          api.Status{},
	"ProcessStatus":   api.ProcessStatus{},
	"PodStatus":       api.PodStatus{},
	"PodCondition":    api.PodCondition{},
	"Resources":       api.Resources{},
	"ScheduleStatus":  api.ScheduleStatus{},
	"ProcessEvent":    api.ProcessEvent{},
	"PhaseEvent":      api.PhaseEvent{},
	"ReloadEvent":     api.ReloadEvent{},
	"Timeline":        api.Timeline{},
	"TimelineProcess": api.TimelineProcess{},
	"Dependency":      api.Dependency{},
	"Incarnation":     api.Incarnation{},
	"ChainLink":       api.ChainLink{},
	"Shutdown":        api.Shutdown{},
	"ShutdownStop":    api.ShutdownStop{},
	"CommandRequest":  api.CommandRequest{},
	"CommandResponse": api.CommandResponse{},
	"CommandResult":   api.CommandResult{},
	"Identity":        api.Identity{},
	"LogLine":         api.LogLine{},
	"ExecRequest":     control.ExecRequest{},
	"ExecFrame":       control.ExecFrame{},
	"DownResponse":    control.DownResponse{},
	"UIConfig":        webui.Config{},
}

func TestOpenAPIComponentsMatchGoTypes(t *testing.T) {
	doc := readDocument(t)
	for name, v := range wireTypes {
		c, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("openapi.json has no #/components/schemas/%s (for %T)", name, v)
			continue
		}
		fields, required := jsonFields(reflect.TypeOf(v))
		for _, f := range fields {
			if _, ok := c.Properties[f]; !ok {
				t.Errorf("%T sends %q: add it to the properties of #/components/schemas/%s in schema/openapi.json", v, f, name)
			}
		}
		for p := range c.Properties {
			if !slices.Contains(fields, p) {
				t.Errorf("#/components/schemas/%s has %q, which %T does not send: remove it from schema/openapi.json", name, p, v)
			}
		}
		sort.Strings(required)
		got := slices.Sorted(slices.Values(c.Required))
		if !slices.Equal(got, required) {
			t.Errorf("#/components/schemas/%s requires %v; %T always sends (fields without omitempty) %v", name, got, v, required)
		}
	}
}

// jsonFields lists the JSON names t marshals, and those always present.
func jsonFields(t reflect.Type) (all, always []string) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") {
			always = append(always, name)
		}
	}
	return all, always
}

func TestOpenAPIEnums(t *testing.T) {
	doc := readDocument(t)
	var states, phases []string
	for i := 0; supervisor.State(i).String() != "unknown"; i++ {
		states = append(states, supervisor.State(i).String())
	}
	states = append(states, supervisor.ShownReloading)
	for i := 0; supervisor.Phase(i).String() != "unknown"; i++ {
		phases = append(phases, supervisor.Phase(i).String())
	}
	var types []string
	for _, e := range config.Enums() {
		if e.Path == "processes.NAME.type" {
			types = e.Words
		}
	}
	for _, c := range []struct {
		name  string
		words []string
		from  string
	}{{"ProcessState", states, "supervisor.State"}, {"Phase", phases, "supervisor.Phase"}, {"ProcessType", types, "the loader's type words"}} {
		got := doc.Components.Schemas[c.name].Enum
		if len(c.words) == 0 || !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(c.words))) {
			t.Errorf("#/components/schemas/%s has the words %v; %s has %v: make the enum of schema/openapi.json the same", c.name, got, c.from, c.words)
		}
	}
}

// routeRE finds the method patterns registered on a ServeMux (and the
// control socket's route map); +op appends every control.Ops word.
var routeRE = regexp.MustCompile(`"(GET|POST|PUT|PATCH|DELETE) (/[^" ]*)"(\+op)?`)

// codeRoutes scans the packages that serve HTTP for their routes, as
// "METHOD /path" in the document's spelling. pprof_on.go is left out: its
// routes exist only in a debugging build (docs/api.md).
func codeRoutes(t *testing.T) map[string]string {
	t.Helper()
	routes := map[string]string{}
	for _, dir := range []string{"server", "control", "webui", "app"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "internal", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in internal/%s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "pprof_on.go" {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range routeRE.FindAllStringSubmatch(string(src), -1) {
				for _, p := range expand(m[2], m[3] != "") {
					routes[m[1]+" "+p] = f
				}
			}
		}
	}
	return routes
}

// expand turns a ServeMux pattern into the document's paths.
func expand(p string, plusOp bool) []string {
	p = strings.TrimSuffix(p, "{$}")
	if strings.HasSuffix(p, "/static/") {
		return []string{p + "{file}"}
	}
	if plusOp || strings.Contains(p, "{op}") {
		base := strings.TrimSuffix(p, "{op}")
		var out []string
		for _, op := range control.Ops {
			out = append(out, base+op)
		}
		return out
	}
	return []string{p}
}

func TestOpenAPIRoutes(t *testing.T) {
	code := codeRoutes(t)
	if len(code) < 10 {
		t.Fatalf("found only %d routes in the code: the scan is broken (%v)", len(code), code)
	}
	doc := map[string]bool{}
	for path, ops := range readDocument(t).Paths {
		for method := range ops {
			if method == "parameters" || strings.HasPrefix(method, "x-") {
				continue
			}
			doc[strings.ToUpper(method)+" "+path] = true
		}
	}
	for r, file := range code {
		if !doc[r] {
			t.Errorf("%s registers %s, which schema/openapi.json does not describe: add its path", file, r)
		}
	}
	for r := range doc {
		if _, ok := code[r]; !ok {
			t.Errorf("schema/openapi.json describes %s, which no code registers: remove it, or register it", r)
		}
	}
}
