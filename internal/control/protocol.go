package control

import "github.com/podvisor/podvisor/api"

// The protocol: HTTP/1.1 over the unix socket, JSON bodies.
//
//	POST /v1/restart|stop|start   {"names": [...]}
//	POST /v1/signal               {"names": [NAME], "signal": "HUP"}
//	POST /v1/reload               {"dry_run": true|false}: re-read the config
//	POST /v1/reload               {"names": [...]}: run each process's reload: action
//	GET  /v1/logs?name=N&tail=K&follow=1&since=T&until=T&grep=RE
//	                              text/plain, one line per output line; without
//	                              name every process's, prefixed, by time
//	POST /v1/logs/reopen          reopen the log files (after logrotate)
//	GET  /v1/identity             {"pid": N, "config": PATH}
//	GET  /v1/status               the /status document, as GET /status on the
//	                              HTTP listener (podvisor status --pod, kube ps)
//	GET  /v1/events               text/event-stream, as GET /events on the
//	                              HTTP listener (internal/server/events.go)
//
// The web page's POST /ui/api/OP (internal/webui, docs/ui.md) takes the
// same command bodies and answers with the same Response.
//
// Every reply carries the headers Podvisor-Pid and Podvisor-Config: which
// podvisor answered.
//
// Commands take ?timeout=DURATION: the most the server waits for the outcome
// before answering with what it knows (the command goes on regardless). A
// command answers 200 with a Response whose OK says whether everything was
// done; 400 for a malformed request, 403 for a peer that is neither root nor
// podvisor's uid, 404 for an unknown path.

// The reply headers naming the podvisor that answered.
const (
	HeaderPid    = api.HeaderPid
	HeaderConfig = api.HeaderConfig
)

// Ops are the command names, as in the CLI and the URL.
var Ops = []string{"restart", "stop", "start", "signal", "reload"}

// The command bodies are the API's (package api, schema/openapi.json).
type (
	Request  = api.CommandRequest
	Result   = api.CommandResult
	Response = api.CommandResponse
)
