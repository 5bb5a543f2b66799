// Package metrics writes podvisor's /metrics in the Prometheus text
// exposition format (version 0.0.4), and holds the few metrics podvisor keeps
// between scrapes (probe histograms, counters by label).
//
// It replaces the Prometheus Go client in the binary for one reason: start-up.
// Linking the client runs its package initialisation (a default registry with
// Go and process collectors, procfs's regular expressions, protobuf's
// registry) in every podvisor process, including `podvisor version` and a
// PID 1 on every container start: about 1.8 ms of CPU before main, against
// about 1 ms for a whole empty Go program (docs/BENCHMARKS.md, section 19).
// podvisor's metrics are a handful of families computed from a snapshot at
// scrape time, so the format is all it needs. The tests check every
// exposition with the client's own parser and linter and with promtool.
package metrics
