// Package schema embeds the JSON Schema of procs.yaml (procs.schema.json,
// JSON Schema draft 2020-12) so that `podvisor schema` can print it. The
// loader in internal/config stays the authority: the schema lets editors
// validate and complete a file, and its tests check that it accepts
// everything the loader accepts.
package schema

import (
	_ "embed"
	"net/http"
)

// JSON is the schema document.
//
//go:embed procs.schema.json
var JSON []byte

// OpenAPI is the OpenAPI 3.1 document of the HTTP port and the control
// socket (openapi.json; docs/api.md), served at /openapi.json on both.
//
//go:embed openapi.json
var OpenAPI []byte

// ServeOpenAPI answers GET /openapi.json, on the HTTP port and on the
// control socket, with OpenAPI.
func ServeOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(OpenAPI)
}
