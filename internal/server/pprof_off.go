//go:build !podvisor_pprof

package server

import "net/http"

// pprofBuilt: the default build has no /debug/pprof/ (see pprof_on.go).
const pprofBuilt = false

func mountPprof(*http.ServeMux) {}
