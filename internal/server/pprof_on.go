//go:build podvisor_pprof

package server

import (
	"net/http"
	"net/http/pprof"
)

// pprofBuilt: this build serves /debug/pprof/ (make build-pprof). The
// default build leaves net/http/pprof out of the binary: its package
// initialisation would run on every start, and the profiles are no
// business of a production listener.
const pprofBuilt = true

// mountPprof registers the profiling handlers explicitly. Cmdline is left
// out: podvisor's own command line is no business of this listener either.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
