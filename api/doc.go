// Package api holds the JSON documents podvisor's HTTP port and control
// socket send and receive, as Go types. The server marshals these very
// types, each type is named after the component of schema/openapi.json
// that describes it, and a test (schema/openapitest) checks that every
// field is in the document and every property is a field: the Go types
// and the document cannot drift apart.
//
// The package github.com/podvisor/podvisor/client talks to a running
// podvisor and returns these types. The compatibility promise is in
// docs/api.md: fields are added, never renamed or removed, within a
// major version.
package api
