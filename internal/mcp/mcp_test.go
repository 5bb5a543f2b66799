package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testServer() *Server {
	return &Server{Name: "podvisor", Version: "test",
		Tools: []Tool{
			{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`),
				Call: func(_ context.Context, args json.RawMessage) (any, error) { return json.RawMessage(args), nil }},
			{Name: "fail", Description: "fails", InputSchema: json.RawMessage(`{"type":"object"}`),
				Call: func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("actions are off") }},
		},
		Resources: []Resource{{URI: "podvisor://status", Name: "status", MIMEType: "application/json",
			Read: func(context.Context) (string, error) { return `{"phase":"running"}`, nil }}},
	}
}

// exchange sends lines and returns the answers, one decoded map each.
func exchange(t *testing.T, s *Server, lines ...string) []map[string]any {
	t.Helper()
	var out strings.Builder
	if err := s.Serve(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		got = append(got, m)
	}
	return got
}

func TestVersionNegotiation(t *testing.T) {
	for asked, want := range map[string]string{"2025-06-18": "2025-06-18", "2024-11-05": "2024-11-05", "2099-01-01": Versions[0], "": Versions[0]} {
		got := exchange(t, testServer(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+asked+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		res, _ := got[0]["result"].(map[string]any)
		if res["protocolVersion"] != want {
			t.Errorf("asked %q: got %v, want %q", asked, got, want)
		}
	}
}

func TestRequests(t *testing.T) {
	got := exchange(t, testServer(),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"podvisor://status"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"podvisor://x"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"sampling/whatever"}`,
		`not json`,
		`{"jsonrpc":"1.0","id":9,"method":"ping"}`,
	)
	if len(got) != 10 { // the notification gets no answer
		t.Fatalf("%d answers: %v", len(got), got)
	}
	result := func(i int) map[string]any { r, _ := got[i]["result"].(map[string]any); return r }
	code := func(i int) float64 { e, _ := got[i]["error"].(map[string]any); c, _ := e["code"].(float64); return c }
	if got[0]["id"] != "a" || result(0) == nil {
		t.Errorf("ping: %v", got[0])
	}
	if tools, _ := result(1)["tools"].([]any); len(tools) != 2 || tools[0].(map[string]any)["inputSchema"] == nil {
		t.Errorf("tools/list: %v", got[1])
	}
	if sc, _ := result(2)["structuredContent"].(map[string]any); sc["x"] != 1.0 || result(2)["isError"] != false {
		t.Errorf("tools/call echo: %v", got[2])
	}
	if result(3)["isError"] != true || !strings.Contains(string(mustJSON(result(3)["content"])), "actions are off") {
		t.Errorf("a failing tool is an error result: %v", got[3])
	}
	if code(4) != codeInvalidParams {
		t.Errorf("unknown tool: %v", got[4])
	}
	if c, _ := result(5)["contents"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != `{"phase":"running"}` {
		t.Errorf("resources/read: %v", got[5])
	}
	if code(6) != -32002 || code(7) != codeNoMethod || code(8) != codeParse || code(9) != codeInvalidRequest {
		t.Errorf("error codes: %v %v %v %v", got[6], got[7], got[8], got[9])
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// FuzzServe: whatever a client sends, every answer is one line of JSON-RPC
// 2.0 with an id, a result or an error, and nothing panics.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":"x"}`, `{"id":null}`, "\x00\n{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out strings.Builder
		if err := testServer().Serve(context.Background(), strings.NewReader(in), &out); err != nil {
			return // a line over maxMessage: reported, not answered
		}
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		sc.Buffer(nil, maxMessage*2)
		for sc.Scan() {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *rpcError       `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" || m.ID == nil || (m.Result == nil) == (m.Error == nil) {
				t.Fatalf("answer %q to %q", sc.Text(), in)
			}
		}
	})
}
