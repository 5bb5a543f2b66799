// Package launch does what the supervisor (internal/supervisor) decides: it
// implements the supervisor's seams with real effects. Launcher starts an
// incarnation through the reaper (internal/proc) with its environment,
// credentials, output pipes, listening sockets and stored fds, reads its
// readiness (notify socket, notify fd, log line) and tells the supervisor
// of its exit once its output has drained (exitgate.go); it also runs stop
// commands, builds redacting probe checkers and watches a sidecar until it
// has been seen running (seen.go). FileWatcher watches the files of
// `watch:`. Sockets and FDStore hold the listening sockets and the stored
// fds for the whole run. The supervisor imports none of this: it talks to
// the Launcher, Child and Watcher interfaces it defines
// (docs/architecture.md).
package launch
