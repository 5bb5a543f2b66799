package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/api"
	"github.com/podvisor/podvisor/client"
	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/mcp"
)

// MCP tools' bounds: an agent's context is small, and a call must not hang.
const (
	mcpDefaultLines = 200
	mcpMaxLines     = 2000
	mcpCallTimeout  = 30 * time.Second
)

// mcpFlags defines mcp's flags (shared with the command table).
func mcpFlags(fs *flag.FlagSet) (path, cfgPath *string, timeout *time.Duration) {
	path, timeout = controlFlags(fs)
	cfgPath = fs.String("c", "", "config `FILE` whose mcp: key allows actions (default: the config of the podvisor on the socket)")
	return path, cfgPath, timeout
}

// cmdMCP serves the Model Context Protocol on stdin and stdout for an agent
// (docs/api.md): tools and resources over the running podvisor's control
// socket. Actions only with mcp: {actions: true} in the config.
func cmdMCP(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("mcp", stderr)
	path, cfgPath, timeout := mcpFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor mcp: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := &mcpTools{c: controlClient(*path), cfgPath: *cfgPath, wait: *timeout}
	t.actions, t.why = t.allowActions(ctx)
	fmt.Fprintf(stderr, "podvisor mcp: serving %s on stdin/stdout; %s\n", *path, t.why)
	srv := &mcp.Server{Name: "podvisor", Version: version, Tools: t.tools(), Resources: t.resources(),
		Instructions: "podvisor supervises the processes of this environment. list_processes first; read_logs with a small lines cap and grep; " +
			"restart, stop, start and signal work only when the config has mcp: {actions: true}."}
	if err := srv.Serve(ctx, os.Stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "podvisor mcp: %v\n", err)
		return exitFail
	}
	return exitOK
}

// mcpTools are the tools' state: the client and whether actions are on.
type mcpTools struct {
	c       *client.Client
	cfgPath string
	wait    time.Duration // how long an action waits for its outcome (--timeout)
	actions bool
	why     string // whether actions are on, and by which file
}

// configPath is -c, else the config of the podvisor on the socket.
func (t *mcpTools) configPath(ctx context.Context) (string, error) {
	if t.cfgPath != "" {
		return t.cfgPath, nil
	}
	id, err := t.c.Identity(ctx)
	if err != nil {
		return "", err
	}
	if id.Config == "" {
		return "", errors.New("the podvisor on the socket names no config file; give -c FILE")
	}
	return id.Config, nil
}

// allowActions reads mcp.actions once, at start (docs/configuration.md).
func (t *mcpTools) allowActions(ctx context.Context) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	path, err := t.configPath(ctx)
	if err != nil {
		return false, "actions off (" + err.Error() + ")"
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return false, "actions off (" + path + " does not load; podvisor check -c " + path + " says why)"
	}
	if !cfg.MCP.Actions {
		return false, "actions off (" + path + " has no mcp: {actions: true})"
	}
	return true, "actions on (mcp: {actions: true} in " + path + ")"
}

// inputSchema is a tool's input schema: an object with these properties.
func inputSchema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

const namesProp = `"names":{"type":"array","items":{"type":"string"},"minItems":1,"description":"process names"}`

func (t *mcpTools) tools() []mcp.Tool {
	action := func(op string) func(context.Context, json.RawMessage) (any, error) {
		return func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in struct {
				Names  []string `json:"names,omitempty"`
				Name   string   `json:"name,omitempty"`
				Signal string   `json:"signal,omitempty"`
			}
			if err := strictJSON(raw, &in); err != nil {
				return nil, err
			}
			req := api.CommandRequest{Names: in.Names}
			if op == "signal" {
				req = api.CommandRequest{Names: []string{in.Name}, Signal: in.Signal}
			}
			return t.act(ctx, op, req)
		}
	}
	return []mcp.Tool{
		{Name: "list_processes", Title: "List processes", InputSchema: inputSchema(""), Call: t.listProcesses,
			Description: "Every supervised process with its type, state (pending, starting, running, backoff, stopping, stopped, completed, failed), pid, readiness, restarts, last exit code and reason; and podvisor's phase."},
		{Name: "read_logs", Title: "Read logs", Call: t.readLogs,
			Description: "The last lines of a process's output (or every process's, interleaved by time), at most `lines` (default 200, at most 2000), optionally only since a time and matching a regular expression.",
			InputSchema: inputSchema(`"process":{"type":"string","description":"process name; omit for every process"},` +
				`"since":{"type":"string","description":"a duration back from now (10m) or an RFC 3339 time"},` +
				`"grep":{"type":"string","description":"regular expression (Go syntax) a line must match"},` +
				`"lines":{"type":"integer","minimum":1,"maximum":2000,"description":"the most lines returned (the last ones)"}`)},
		{Name: "read_timeline", Title: "Read the timeline", InputSchema: inputSchema(""), Call: t.readTimeline,
			Description: "When each process was spawned, started, became ready, was asked to stop and exited; the critical chain of the start-up; the shutdown report after a teardown."},
		{Name: "read_shutdown_report", Title: "Read the shutdown report", InputSchema: inputSchema(""), Call: t.readShutdown,
			Description: "Where the last teardown's budget went: per process how it stopped (stop command, signal, SIGKILL) and how long it took; null shutdown before any teardown."},
		{Name: "check_config", Title: "Check a config", Call: t.checkConfig,
			Description: "Validate a procs.yaml as `podvisor check` does: every error with its file:line, warnings, and the process and level counts.",
			InputSchema: inputSchema(`"path":{"type":"string","description":"the config file; default: the running podvisor's"}`)},
		{Name: "restart", Title: "Restart processes", InputSchema: inputSchema(namesProp, "names"), Call: action("restart"),
			Description: "Restart processes (stop, then start; dependents with restart: true follow). Needs mcp: {actions: true} in the config."},
		{Name: "stop", Title: "Stop processes", InputSchema: inputSchema(namesProp, "names"), Call: action("stop"),
			Description: "Stop processes; they stay stopped until started. Needs mcp: {actions: true} in the config."},
		{Name: "start", Title: "Start processes", InputSchema: inputSchema(namesProp, "names"), Call: action("start"),
			Description: "Start stopped, failed or completed processes. Needs mcp: {actions: true} in the config."},
		{Name: "signal", Title: "Signal a process", Call: action("signal"),
			Description: "Send a signal (HUP, USR1, TERM, ... or a number) to a process's group. Needs mcp: {actions: true} in the config.",
			InputSchema: inputSchema(`"name":{"type":"string","description":"process name"},"signal":{"type":"string","description":"signal name or number, such as HUP"}`, "name", "signal")},
	}
}

// strictJSON decodes a tool's arguments, refusing unknown ones.
func strictJSON(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

func (t *mcpTools) act(ctx context.Context, op string, req api.CommandRequest) (any, error) {
	if !t.actions {
		return nil, fmt.Errorf("%s refused: %s; a person can allow actions with mcp: {actions: true} in the config, then restart podvisor mcp", op, t.why)
	}
	ctx, cancel := context.WithTimeout(ctx, t.wait+clientSlack)
	defer cancel()
	res, err := t.c.CommandWait(ctx, op, req, t.wait)
	if err != nil {
		return nil, err
	}
	if !res.OK && res.Error != "" {
		return nil, errors.New(res.Error)
	}
	return res, nil
}

func (t *mcpTools) listProcesses(ctx context.Context, _ json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	return t.c.Status(ctx)
}

func (t *mcpTools) readTimeline(ctx context.Context, _ json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	return t.c.Timeline(ctx)
}

func (t *mcpTools) readShutdown(ctx context.Context, raw json.RawMessage) (any, error) {
	d, err := t.readTimeline(ctx, raw)
	if err != nil {
		return nil, err
	}
	return map[string]*api.Shutdown{"shutdown": d.(api.Timeline).Shutdown}, nil
}

func (t *mcpTools) checkConfig(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := strictJSON(raw, &in); err != nil {
		return nil, err
	}
	if in.Path == "" {
		var err error
		if in.Path, err = t.configPath(ctx); err != nil {
			return nil, err
		}
	}
	return check(in.Path, false, config.Selection{}), nil
}

// logsResult is read_logs's answer.
type logsResult struct {
	Lines     []api.LogLine `json:"lines"`
	Truncated bool          `json:"truncated"` // more lines matched than lines allowed
}

func (t *mcpTools) readLogs(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		Process string `json:"process"`
		Since   string `json:"since"`
		Grep    string `json:"grep"`
		Lines   int    `json:"lines"`
	}
	if err := strictJSON(raw, &in); err != nil {
		return nil, err
	}
	if in.Lines <= 0 {
		in.Lines = mcpDefaultLines
	}
	in.Lines = min(in.Lines, mcpMaxLines)
	if _, err := regexp.Compile(in.Grep); err != nil {
		return nil, fmt.Errorf("grep: %w", err)
	}
	since, err := parseWhen(in.Since, time.Now())
	if err != nil {
		return nil, fmt.Errorf("since: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	// One more than allowed: whether there were more.
	q := api.LogsQuery{Name: in.Process, Tail: in.Lines + 1, Since: since, Grep: in.Grep}
	out := logsResult{Lines: []api.LogLine{}}
	err = t.c.LogLines(ctx, q, func(l api.LogLine) error { out.Lines = append(out.Lines, l); return nil })
	if err != nil {
		return nil, err
	}
	if len(out.Lines) > in.Lines {
		out.Lines, out.Truncated = out.Lines[1:], true
	}
	return out, nil
}

func (t *mcpTools) resources() []mcp.Resource {
	return []mcp.Resource{
		{URI: "podvisor://status", Name: "status", MIMEType: "application/json",
			Description: "The processes and their states (the /status document, schema/openapi.json's Status).",
			Read: func(ctx context.Context) (string, error) {
				st, err := t.listProcesses(ctx, nil)
				if err != nil {
					return "", err
				}
				b, err := json.Marshal(st)
				return string(b), err
			}},
		{URI: "podvisor://config", Name: "config", MIMEType: "application/yaml",
			Description: "The running podvisor's config file (procs.yaml), as written.",
			Read: func(ctx context.Context) (string, error) {
				path, err := t.configPath(ctx)
				if err != nil {
					return "", err
				}
				b, err := os.ReadFile(path)
				return string(b), err
			}},
	}
}
