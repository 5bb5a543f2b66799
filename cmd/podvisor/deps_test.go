package main

import (
	"os/exec"
	"strings"
	"testing"
)

// Packages that must not be linked into podvisor: each costs every command's
// start-up or megabytes of binary for something a few lines do
// (docs/BENCHMARKS.md sections 19 and 23). text/template and html/template
// keep every exported method of the program alive for reflection (+2.3 MB);
// package html adds a 2,000-entity table; the Prometheus client registers its
// collectors at init; net/http/pprof initialises on every start. The
// OpenAPI validators check answers in tests only (schema/openapitest).
// grpc-go serves the gRPC health checks of tests only: podvisor speaks the
// protocol itself (internal/health/grpc.go), a few KB instead of megabytes.
func TestNoCostlyDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	if !deps["net/http"] {
		t.Fatalf("go list -deps printed no net/http: not the dependency list (%d packages)", len(deps))
	}
	for _, bad := range []string{"text/template", "html/template", "html", "net/http/pprof",
		"github.com/prometheus/client_golang/prometheus",
		"github.com/pb33f/libopenapi", "github.com/pb33f/libopenapi-validator", "github.com/podvisor/podvisor/schema/openapitest",
		"google.golang.org/grpc", "google.golang.org/protobuf/proto"} {
		if deps[bad] {
			t.Errorf("podvisor links %s; see the comment of this test for why it must not", bad)
		}
	}
}
