// Package mcp serves the Model Context Protocol over stdio (JSON-RPC 2.0,
// one message a line): the part a coding agent needs to use podvisor's
// tools and resources (docs/api.md, "podvisor mcp"). It knows nothing of
// podvisor: cmd/podvisor's mcp.go gives it the tools and resources, which
// talk to a running podvisor through package client.
//
// Written here rather than taken from the official Go SDK: the SDK adds
// 1.8 MB to the binary (OAuth, a JSON Schema library, a JSON encoder of
// its own), over podvisor's 1 MB budget for a feature (docs/BENCHMARKS.md);
// this subset is initialize with version negotiation, ping, tools/list,
// tools/call, resources/list and resources/read.
package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Versions are the protocol revisions served, newest first. A client that
// asks for another gets the newest (the specification's negotiation).
var Versions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// maxMessage bounds one message a client sends.
const maxMessage = 4 << 20

// JSON-RPC error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
)

// Tool is one tool: Call's error becomes a result with isError set (the
// agent sees why), never a protocol error.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Call returns the structured result: a value that marshals to a JSON
	// object.
	Call func(ctx context.Context, args json.RawMessage) (any, error) `json:"-"`
}

// Resource is one readable document.
type Resource struct {
	URI         string                                    `json:"uri"`
	Name        string                                    `json:"name"`
	Description string                                    `json:"description,omitempty"`
	MIMEType    string                                    `json:"mimeType"`
	Read        func(ctx context.Context) (string, error) `json:"-"`
}

// Server answers one client.
type Server struct {
	Name, Version string
	Instructions  string // how to use the tools, for the agent's context
	Tools         []Tool
	Resources     []Resource
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// Serve reads requests from r and writes answers to w until r ends (the
// client closed stdin) or ctx does. Requests are answered in order.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxMessage)
	enc := json.NewEncoder(w) // one line a message: Encode ends it with \n
	for sc.Scan() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		if rep, ok := s.handle(ctx, line); ok {
			if err := enc.Encode(rep); err != nil {
				return fmt.Errorf("mcp: write: %w", err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("mcp: read: %w", err)
	}
	return nil
}

// handle answers one message; ok is false for a notification or a
// response, which get no answer.
func (s *Server) handle(ctx context.Context, line []byte) (rep reply, ok bool) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return reply{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{codeParse, "parse error: " + err.Error()}}, true
	}
	if m.Method == "" && m.ID != nil { // a response to a request we never send
		return reply{}, false
	}
	if m.ID == nil || string(m.ID) == "null" {
		return reply{}, false // a notification (initialized, cancelled): nothing to answer
	}
	rep = reply{JSONRPC: "2.0", ID: m.ID}
	if !validID(m.ID) || m.JSONRPC != "2.0" {
		rep.ID = json.RawMessage("null")
		rep.Error = &rpcError{codeInvalidRequest, `invalid request: want "jsonrpc": "2.0" and a string or number id`}
		return rep, true
	}
	result, err := s.call(ctx, m.Method, m.Params)
	var re *rpcError
	switch {
	case errors.As(err, &re):
		rep.Error = re
	case err != nil:
		rep.Error = &rpcError{codeInvalidParams, err.Error()}
	default:
		rep.Result = result
	}
	return rep, true
}

// validID: JSON-RPC ids are strings or numbers.
func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

func (e *rpcError) Error() string { return e.Message }

// call dispatches a request by its method.
func (s *Server) call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return s.initialize(params)
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return map[string]any{"tools": s.Tools}, nil
	case "tools/call":
		return s.callTool(ctx, params)
	case "resources/list":
		return map[string]any{"resources": s.Resources}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []any{}}, nil
	case "resources/read":
		return s.readResource(ctx, params)
	}
	return nil, &rpcError{codeNoMethod, fmt.Sprintf("method %q not found", printable(method))}
}

func (s *Server) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	version := Versions[0]
	if slices.Contains(Versions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities": map[string]any{
			"tools":     map[string]any{"listChanged": false},
			"resources": map[string]any{"listChanged": false, "subscribe": false},
		},
		"serverInfo":   map[string]string{"name": s.Name, "version": s.Version},
		"instructions": s.Instructions,
	}, nil
}

// content is a tool result's or a resource's text block.
type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (s *Server) callTool(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(s.Tools, func(t Tool) bool { return t.Name == p.Name })
	if i < 0 {
		return nil, &rpcError{codeInvalidParams, fmt.Sprintf("unknown tool %q", printable(p.Name))}
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	out, err := s.Tools[i].Call(ctx, args)
	if err != nil {
		return map[string]any{"content": []content{{"text", err.Error()}}, "isError": true}, nil
	}
	text, err := json.Marshal(out)
	if err != nil {
		return map[string]any{"content": []content{{"text", "encode result: " + err.Error()}}, "isError": true}, nil
	}
	// The structured result, and its text for clients of older revisions.
	return map[string]any{"content": []content{{"text", string(text)}}, "structuredContent": json.RawMessage(text), "isError": false}, nil
}

func (s *Server) readResource(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(s.Resources, func(r Resource) bool { return r.URI == p.URI })
	if i < 0 {
		return nil, &rpcError{-32002, fmt.Sprintf("resource %q not found", printable(p.URI))}
	}
	r := s.Resources[i]
	text, err := r.Read(ctx)
	if err != nil {
		return nil, &rpcError{-32603, fmt.Sprintf("read %s: %v", r.URI, err)}
	}
	return map[string]any{"contents": []map[string]string{{"uri": r.URI, "mimeType": r.MIMEType, "text": text}}}, nil
}

// decodeParams decodes a request's params (an object; absent is empty).
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return &rpcError{codeInvalidParams, "invalid params: " + err.Error()}
	}
	return nil
}

// printable cuts a client's word for quoting it in an error.
func printable(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
