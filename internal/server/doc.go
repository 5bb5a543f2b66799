// Package server is podvisor's read-only HTTP face: /readyz, /livez, /status
// and /metrics (docs/reference.md, "HTTP endpoints"), plus the client side used by
// `podvisor status`.
//
// Everything served is derived from an immutable supervisor.Snapshot, so a
// request never takes a lock the supervision loop holds and never blocks it;
// only /livez talks to the loop, through Source.Ping under a short deadline.
//
// Nothing here can change the supervisor: every route is GET/HEAD only, and
// no response carries a command line or an environment value, because those
// can hold secrets. The handler uses its own ServeMux, never
// http.DefaultServeMux (which net/http/pprof registers on as a side effect of
// being imported), and profiling is mounted only when asked for.
//
// The caller binds with Listen before spawning any child (a busy port must
// fail the start, not leave podvisor running without a readiness endpoint),
// wraps the handler in NewHTTPServer, and owns Serve and Shutdown so the
// server can outlive the teardown it reports on.
package server
