// Package openapitest checks answers against podvisor's OpenAPI document
// (schema/openapi.json, docs/api.md) for tests: a response against its
// operation (path, method, status, content type, body), a JSON value against
// one of the document's component schemas. Only tests import it: the
// validators it uses are not linked into podvisor (cmd/podvisor/deps_test.go).
package openapitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/podvisor/podvisor/schema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Doc is the document, parsed for both checks. Build one per test binary
// (New is slow: it compiles the whole document) and share it; it is safe
// for concurrent use.
type Doc struct {
	resp validator.Validator

	mu       sync.Mutex // guards schemas (the compiler is not safe for concurrent use) and compiled
	schemas  *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// New parses schema/openapi.json.
func New() (*Doc, error) {
	doc, err := libopenapi.NewDocument(schema.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("schema/openapi.json: %w", err)
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("schema/openapi.json: %v", errs)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.OpenAPI))
	if err != nil {
		return nil, fmt.Errorf("schema/openapi.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("openapi.json", raw); err != nil {
		return nil, fmt.Errorf("schema/openapi.json: %w", err)
	}
	return &Doc{resp: v, schemas: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

// Validator returns the document's validator (libopenapi-validator).
func (d *Doc) Validator() validator.Validator { return d.resp }

// Response checks one answer against the document: its operation (path
// and method) exists, its status is declared, its content type is one the
// status declares, and a JSON body validates against that schema. body is
// what was read of resp.Body (which need not be readable any more). HEAD
// requests are not checked (they have no body). The error lists every
// difference. A JSON lines answer is checked a line at a time.
func (d *Doc) Response(req *http.Request, resp *http.Response, body []byte) error {
	if req.Method == http.MethodHead {
		return nil
	}
	// JSON lines (exec's answer): each line is one value of the schema.
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") && bytes.Count(body, []byte("\n")) > 1 {
		for _, line := range bytes.Split(bytes.TrimRight(body, "\n"), []byte("\n")) {
			if err := d.Response(req, resp, append(line, '\n')); err != nil {
				return err
			}
		}
		return nil
	}
	copied := *resp
	copied.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := d.resp.ValidateHttpResponse(req, &copied); !ok {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s answered %d (%s), which schema/openapi.json does not describe:",
			req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"))
		for _, e := range errs {
			fmt.Fprintf(&b, "\n  %s", e.Message)
			if e.Reason != "" {
				fmt.Fprintf(&b, ": %s", e.Reason)
			}
			for _, s := range e.SchemaValidationErrors {
				fmt.Fprintf(&b, "\n    %s: %s", s.FieldPath, s.Reason)
			}
		}
		fmt.Fprintf(&b, "\n  body: %.400s", body)
		return fmt.Errorf("%s", b.String())
	}
	return nil
}

// JSON checks data, one JSON value, against the component schema named
// (Status, Timeline, CommandResponse, ...).
func (d *Doc) JSON(component string, data []byte) error {
	s, err := d.Component(component)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w: %.200s", err, data)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("does not match #/components/schemas/%s of schema/openapi.json: %v", component, err)
	}
	return nil
}

// Component returns the compiled component schema named.
func (d *Doc) Component(name string) (*jsonschema.Schema, error) {
	return d.Schema("#/components/schemas/" + name)
}

// Schema returns the schema at pointer ("#/paths/~1status/...") compiled.
func (d *Doc) Schema(pointer string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.compiled[pointer]; ok {
		return s, nil
	}
	s, err := d.schemas.Compile("openapi.json" + pointer)
	if err != nil {
		return nil, fmt.Errorf("schema %s of schema/openapi.json: %w", pointer, err)
	}
	d.compiled[pointer] = s
	return s, nil
}
