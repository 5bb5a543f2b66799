package e2e

// Issue 40: every answer the black-box tests receive from the HTTP port
// (r.Get, getJSON, hostGet) is checked against schema/openapi.json (path,
// method, status, content type, JSON body); TestOpenAPI_EveryEndpoint asks
// every operation of the document once, on both listeners, so a drift
// between the code and the document fails a test.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podvisor/podvisor/schema"
	"github.com/podvisor/podvisor/schema/openapitest"
)

// apiDoc is the parsed document, shared by every test of the package.
var apiDoc = sync.OnceValues(openapitest.New)

// apiGet fetches url with c within timeout and checks the answer.
func apiGet(t testing.TB, c *http.Client, url string, timeout time.Duration) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	return apiDo(t, c, req)
}

// apiDo sends req with c and checks the answer against the document; a
// transport error returns status 0.
func apiDo(t testing.TB, c *http.Client, req *http.Request) (int, string, error) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, string(body), err
	}
	checkAPI(t, req, resp, body)
	return resp.StatusCode, string(body), nil
}

// checkAPI fails t when the answer is not what the document says. The
// ServeMux's own answers for a path or method nobody serves (404, 405) are
// not checked: the document lists what is there, not what is not.
func checkAPI(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode == http.StatusNotFound && string(body) == "404 page not found\n" ||
		resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "" {
		return
	}
	doc, err := apiDoc()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Response(req, resp, body); err != nil {
		t.Error(err)
	}
}

// unixHTTP is a client of the control socket at sock.
func unixHTTP(sock string) *http.Client {
	return &http.Client{Timeout: scaled(30 * time.Second), Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// call is one request of TestOpenAPI_EveryEndpoint, and the path of the
// document it exercises.
type call struct {
	method, url, body, token string
	want                     int
	op                       string // "METHOD /documented/path"
}

func TestOpenAPI_EveryEndpoint(t *testing.T) {
	short := shortTemp(t)
	sock := filepath.Join(short, "c.sock")
	tok := filepath.Join(short, "tok")
	const token = "0123456789abcdef0123"
	if err := os.WriteFile(tok, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf("control: %q\nui:\n  logs: true\n  actions: true\n  token_file: %q\nprocesses:\n  a:\n    command: \"echo hello; exec sleep 1000\"\n", sock, tok)
	r := startPodvisor(t, yaml, withHTTP())
	eventually(t, 10*time.Second, func() bool { c, _ := r.Get(t, "/readyz"); return c == http.StatusOK }, "/readyz never 200")
	eventually(t, 10*time.Second, func() bool { _, err := net.Dial("unix", sock); return err == nil }, "control socket at %s", sock)

	web := &http.Client{Timeout: scaled(30 * time.Second)}
	ctlc := unixHTTP(sock)
	h := func(p string) string { return r.URL(p) }
	u := func(p string) string { return "http://podvisor" + p }
	names := `{"names": ["a"]}`
	httpCalls := []call{
		{"GET", h("/readyz"), "", "", 200, "GET /readyz"},
		{"GET", h("/livez"), "", "", 200, "GET /livez"},
		{"GET", h("/status"), "", "", 200, "GET /status"},
		{"POST", h("/status"), "", "", 405, "POST /status"},
		{"GET", h("/metrics"), "", "", 200, "GET /metrics"},
		{"GET", h("/timeline"), "", "", 200, "GET /timeline"},
		{"GET", h("/openapi.json"), "", "", 200, "GET /openapi.json"},
		{"GET", h("/"), "", "", 200, "GET /"},
		{"GET", h("/ui/static/app.js"), "", "", 200, "GET /ui/static/{file}"},
		{"GET", h("/ui/timeline.svg"), "", "", 200, "GET /ui/timeline.svg"},
		{"GET", h("/ui/api/config"), "", "", 200, "GET /ui/api/config"},
		{"GET", h("/ui/api/logs?name=a"), "", "", 200, "GET /ui/api/logs"},
		{"GET", h("/ui/api/logs?name=nosuch"), "", "", 404, "GET /ui/api/logs"},
		{"GET", h("/ui/api/logs?tail=x"), "", "", 400, "GET /ui/api/logs"},
		{"POST", h("/ui/api/restart"), names, "", 401, "POST /ui/api/restart"},
		{"POST", h("/ui/api/restart"), `{"nosuch": 1}`, token, 400, "POST /ui/api/restart"},
		{"POST", h("/ui/api/restart"), names, token, 200, "POST /ui/api/restart"},
		{"POST", h("/ui/api/stop"), names, token, 200, "POST /ui/api/stop"},
		{"POST", h("/ui/api/start"), names, token, 200, "POST /ui/api/start"},
		{"POST", h("/ui/api/signal"), `{"names": ["a"], "signal": "CONT"}`, token, 200, "POST /ui/api/signal"},
		{"POST", h("/ui/api/reload"), `{"dry_run": true}`, token, 200, "POST /ui/api/reload"},
	}
	ctlCalls := []call{
		{"GET", u("/openapi.json"), "", "", 200, "GET /openapi.json"},
		{"GET", u("/v1/identity"), "", "", 200, "GET /v1/identity"},
		{"GET", u("/v1/timeline"), "", "", 200, "GET /v1/timeline"},
		{"GET", u("/v1/logs?name=a&tail=5"), "", "", 200, "GET /v1/logs"},
		{"GET", u("/v1/logs?name=nosuch"), "", "", 404, "GET /v1/logs"},
		{"GET", u("/v1/logs?tail=x"), "", "", 400, "GET /v1/logs"},
		{"POST", u("/v1/logs/reopen"), "", "", 200, "POST /v1/logs/reopen"},
		{"GET", u("/v1/attach?name=a"), "", "", 400, "GET /v1/attach"}, // without the upgrade; the stream: test/ui/attach_test.go
		{"POST", u("/v1/restart"), `{"nosuch": 1}`, "", 400, "POST /v1/restart"},
		{"POST", u("/v1/restart?timeout=x"), names, "", 400, "POST /v1/restart"},
		{"POST", u("/v1/restart"), `{"names": ["nosuch"]}`, "", 200, "POST /v1/restart"},
		{"POST", u("/v1/restart"), names, "", 200, "POST /v1/restart"},
		{"POST", u("/v1/stop"), names, "", 200, "POST /v1/stop"},
		{"POST", u("/v1/start"), names, "", 200, "POST /v1/start"},
		{"POST", u("/v1/signal"), `{"names": ["a"], "signal": "CONT"}`, "", 200, "POST /v1/signal"},
		{"POST", u("/v1/reload"), `{"dry_run": true}`, "", 200, "POST /v1/reload"},
		{"GET", u("/v1/identity"), "", "", 200, "GET /v1/identity"},
		{"GET", u("/v1/status"), "", "", 200, "GET /v1/status"},
		{"POST", u("/v1/exec"), `{"name": "a", "command": ["true"]}`, "", 200, "POST /v1/exec"},
		{"POST", u("/v1/exec"), `{"nosuch": 1}`, "", 400, "POST /v1/exec"},
		{"POST", u("/v1/exec"), `{"name": "a", "command": ["true"], "tty": true}`, "", 400, "POST /v1/exec"}, // without the upgrade; the stream: devloop_test.go, test/ui/exec_test.go
	}
	done := map[string]bool{}
	for _, c := range append(httpCalls, ctlCalls...) {
		client := web
		if strings.HasPrefix(c.url, "http://podvisor/") {
			client = ctlc
		}
		req, err := http.NewRequest(c.method, c.url, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		code, body, err := apiDo(t, client, req)
		if err != nil || code != c.want {
			t.Errorf("%s %s: %d %v %.300s, want %d", c.method, c.url, code, err, body, c.want)
		}
		if c.op == "GET /openapi.json" && code == 200 && body != string(schema.OpenAPI) {
			t.Errorf("%s serves another document than schema/openapi.json", c.url)
		}
		done[c.op] = true
	}
	for _, ev := range []struct {
		client  *http.Client
		url, op string
	}{
		{web, h("/events?resources=1s"), "GET /events"},
		{ctlc, u("/v1/events"), "GET /v1/events"},
	} {
		checkEventStream(t, ev.client, ev.url)
		done[ev.op] = true
	}
	// Last: down ends the run, answering with its report.
	req, err := http.NewRequest("POST", u("/v1/down"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, body, err := apiDo(t, ctlc, req); err != nil || code != 200 {
		t.Errorf("POST /v1/down: %d %v %.300s, want 200", code, err, body)
	}
	done["POST /v1/down"] = true
	for _, op := range documentedOps(t) {
		if !done[op] {
			t.Errorf("schema/openapi.json describes %s, which this test never asks: add a call", op)
		}
	}
}

// documentedOps lists the document's operations as "METHOD /path".
func documentedOps(t *testing.T) []string {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(schema.OpenAPI, &d); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for p, m := range d.Paths {
		for method := range m {
			ops = append(ops, strings.ToUpper(method)+" "+p)
		}
	}
	slices.Sort(ops)
	return ops
}

// checkEventStream opens an event stream, checks its answer against the
// document and its first frames (status, then with ?resources a resources
// frame) against EventFrame.
func checkEventStream(t *testing.T, c *http.Client, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	checkAPI(t, req, resp, nil)
	doc, err := apiDoc()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"status"}
	if strings.Contains(url, "resources=") {
		want = append(want, "resources")
	}
	br := bufio.NewReader(resp.Body)
	for _, name := range want {
		event, data := readFrame(t, br)
		if event != name {
			t.Fatalf("GET %s: frame %q, want %q", url, event, name)
		}
		frame := fmt.Appendf(nil, `{"event": %q, "data": %s}`, event, data)
		if err := doc.JSON("EventFrame", frame); err != nil {
			t.Errorf("GET %s: %s frame: %v", url, event, err)
		}
	}
}

// readFrame reads the next SSE frame with an event, skipping retry and
// comment lines.
func readFrame(t *testing.T, br *bufio.Reader) (event string, data []byte) {
	t.Helper()
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("event stream ended: %v", err)
		}
		line = bytes.TrimRight(line, "\n")
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = line[len("data: "):]
		case len(line) == 0 && event != "":
			return event, data
		}
	}
}
