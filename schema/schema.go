// Package schema embeds the JSON Schema of procs.yaml (procs.schema.json,
// JSON Schema draft 2020-12) so that `podvisor schema` can print it. The
// loader in internal/config stays the authority: the schema lets editors
// validate and complete a file, and its tests check that it accepts
// everything the loader accepts.
package schema

import _ "embed"

// JSON is the schema document.
//
//go:embed procs.schema.json
var JSON []byte
