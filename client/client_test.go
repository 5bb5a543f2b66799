package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/api"
	"github.com/podvisor/podvisor/client"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/server"
)

func newClient(t *testing.T, o client.Options) *client.Client {
	t.Helper()
	c, err := client.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDialAddr(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{":9464", "127.0.0.1:9464", false},
		{"127.0.0.1:9464", "127.0.0.1:9464", false},
		{"[::1]:9464", "[::1]:9464", false},
		{"localhost:1", "localhost:1", false},
		{"9464", "", true},
		{"host:", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := client.DialAddr(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("DialAddr(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := client.New(client.Options{}); err == nil {
		t.Error("New without a socket or an address: no error")
	}
}

func TestHTTPPort(t *testing.T) {
	src := newSource(snapshot())
	c := newClient(t, client.Options{Addr: serveHTTP(t, src)})
	ctx := context.Background()
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := server.NewStatus(src.snap)
	if len(st.Processes) != 2 || st.Processes[0].Pid != 42 || !st.Processes[0].StartedAt.Equal(t0) ||
		*st.Processes[1].ExitCode != 3 || st.Phase != want.Phase || !st.Ready {
		t.Errorf("status %+v, want %+v", st, want)
	}
	doc, err := c.Timeline(ctx)
	if err != nil || !doc.Start.Equal(t0) || doc.Processes[0].Name != "db" {
		t.Errorf("timeline %+v, %v", doc, err)
	}
	if p, err := c.Readyz(ctx); err != nil || !p.OK {
		t.Errorf("readyz %+v, %v; want ready", p, err)
	}
	if p, err := c.Livez(ctx); err != nil || !p.OK {
		t.Errorf("livez %+v, %v; want alive", p, err)
	}
	doc2, err := c.OpenAPI(ctx)
	if err != nil || !bytes.Contains(doc2, []byte(`"openapi": "3.1`)) {
		t.Errorf("openapi.json: %.80s, %v", doc2, err)
	}
	if _, err := c.Restart(ctx, "db"); err == nil || !strings.Contains(err.Error(), "control socket") {
		t.Errorf("restart through the HTTP port: %v, want an error naming the control socket", err)
	}
}

func TestReadyzNotReady(t *testing.T) {
	snap := snapshot()
	snap.Ready, snap.NotReady = false, []string{"db"}
	c := newClient(t, client.Options{Addr: serveHTTP(t, newSource(snap))})
	p, err := c.Readyz(context.Background())
	if err != nil || p.OK || !strings.Contains(p.Detail, "db") {
		t.Errorf("readyz %+v, %v; want not ready, naming db", p, err)
	}
}

func TestNothingListening(t *testing.T) {
	addr := closedAddr(t)
	c := newClient(t, client.Options{Addr: addr})
	_, err := c.Status(context.Background())
	if want := "no podvisor answering at " + addr + ": connection refused"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v does not match ECONNREFUSED", err)
	}
	c = newClient(t, client.Options{Socket: "/nonexistent/pv.sock"})
	if _, err := c.Restart(context.Background(), "web"); err == nil || !strings.Contains(err.Error(), "no podvisor is listening on /nonexistent/pv.sock") {
		t.Errorf("socket error %v", err)
	}
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	c := newClient(t, client.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Status(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "no podvisor answering at "+addr+": ") {
		t.Errorf("error %v, want one naming %s", err, addr)
	}
}

func TestSomethingElseAnswers(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"404", http.NotFound, "unexpected answer from ADDR: 404 Not Found"},
		{"500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }, "unexpected answer from ADDR: 500 Internal Server Error"},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>hi</html>")) },
			"unexpected answer from ADDR: not a podvisor status: "},
		{"421", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "host \"pod.example\" is not served; add it to listen_hosts", http.StatusMisdirectedRequest)
		}, "ADDR answered 421 Misdirected Request: \"host \\\"pod.example\\\" is not served; add it to listen_hosts\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			addr := srv.Listener.Addr().String()
			_, err := newClient(t, client.Options{Addr: addr}).Status(context.Background())
			want := strings.ReplaceAll(tt.want, "ADDR", addr)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %v, want prefix %q", err, want)
			}
		})
	}
}

func TestControlSocket(t *testing.T) {
	src := newSource(snapshot())
	b := &backend{tails: logs.NewTails(10, 1<<10)}
	c := newClient(t, client.Options{Socket: serveSocket(t, src, b)})
	ctx := context.Background()

	st, err := c.Status(ctx) // from the event stream's first frame
	if err != nil || len(st.Processes) != 2 || st.Processes[1].State != "failed" {
		t.Fatalf("status over the socket: %+v, %v", st, err)
	}
	if doc, err := c.Timeline(ctx); err != nil || !doc.Start.Equal(t0) {
		t.Errorf("timeline over the socket: %+v, %v", doc, err)
	}
	res, err := c.Signal(ctx, "db", "HUP")
	if err != nil || !res.OK || res.Results[0].Message != "signal HUP" || res.By.Pid != 7 || res.By.Config != "/etc/procs.yaml" {
		t.Errorf("signal: %+v, %v", res, err)
	}
	for op, call := range map[string]func(context.Context, ...string) (api.CommandResponse, error){"restart": c.Restart, "stop": c.Stop, "start": c.Start} {
		if res, err := call(ctx, "db"); err != nil || !res.OK || res.Results[0].Message != op+" " {
			t.Errorf("%s: %+v, %v", op, res, err)
		}
	}
	if res, err := c.Stop(ctx, "nope"); err != nil || res.OK || res.Error == "" {
		t.Errorf("stop of an unknown process: %+v, %v; want a refusal", res, err)
	}
	if res, err := c.Reload(ctx, true); err != nil || !res.OK {
		t.Errorf("reload: %+v, %v", res, err)
	}
	if id, err := c.Identity(ctx); err != nil || id.Pid != 7 {
		t.Errorf("identity %+v, %v", id, err)
	}
	if res, err := c.ReopenLogs(ctx); err != nil || !res.OK {
		t.Errorf("reopen: %+v, %v", res, err)
	}
	b.mu.Lock()
	got := strings.Join(b.reqs, " ")
	b.mu.Unlock()
	if want := "signal"; !strings.HasPrefix(got, want) || !strings.Contains(got, "reload") {
		t.Errorf("backend saw %q", got)
	}
	if doc, err := c.OpenAPI(ctx); err != nil || !bytes.Contains(doc, []byte("/v1/restart")) {
		t.Errorf("openapi over the socket: %v", err)
	}
}

func TestLogLines(t *testing.T) {
	b := &backend{tails: logs.NewTails(10, 1<<10)}
	b.tails.Get("db").Add("stdout", []byte("ready to accept"), t0)
	b.tails.Get("migrate").Add("stderr", []byte("boom | here"), t0.Add(time.Second))
	c := newClient(t, client.Options{Socket: serveSocket(t, newSource(snapshot()), b)})
	var got []api.LogLine
	err := c.LogLines(context.Background(), api.LogsQuery{Tail: -1}, func(l api.LogLine) error { got = append(got, l); return nil })
	want := []api.LogLine{{Process: "db", Line: "ready to accept"}, {Process: "migrate", Line: "boom | here"}}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("lines %+v, %v; want %+v", got, err, want)
	}
	got = nil
	err = c.LogLines(context.Background(), api.LogsQuery{Name: "db", Tail: -1, Grep: "ready"}, func(l api.LogLine) error { got = append(got, l); return nil })
	if err != nil || len(got) != 1 || got[0] != want[0] {
		t.Errorf("db's lines %+v, %v", got, err)
	}
	var buf bytes.Buffer
	if err := c.Logs(context.Background(), &buf, api.LogsQuery{Tail: 1}); err != nil || buf.String() != "migrate | boom | here\n" {
		t.Errorf("raw logs %q, %v", buf.String(), err)
	}
	stop := errors.New("enough")
	if err := c.LogLines(context.Background(), api.LogsQuery{Tail: -1}, func(api.LogLine) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("each's error: got %v", err)
	}
}

func TestEvents(t *testing.T) {
	src := newSource(snapshot())
	for name, o := range map[string]client.Options{
		"socket": {Socket: serveSocket(t, src, &backend{tails: logs.NewTails(1, 1)})},
		"http":   {Addr: serveHTTP(t, src)},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := newClient(t, o).Events(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ev, err := s.Next()
			var st api.Status
			if err != nil || ev.Name != "status" || ev.Decode(&st) != nil || st.Processes[0].Name != "db" {
				t.Errorf("first frame %q %s, %v", ev.Name, ev.Data, err)
			}
		})
	}
}

func TestEventStreamParses(t *testing.T) {
	frames := ": heartbeat\n\nevent: phase\ndata: {\"phase\":\"stopping\",\"ready\":false,\"generation\":1}\n\nevent: overflow\r\ndata:{}\r\n\r\n"
	evs, err := client.ReadEvents(io.NopCloser(strings.NewReader(frames)))
	if err != nil || len(evs) != 2 || evs[0].Name != "phase" || string(evs[1].Data) != "{}" {
		t.Fatalf("frames %+v, %v", evs, err)
	}
	var ph api.PhaseEvent
	if err := evs[0].Decode(&ph); err != nil || ph.Phase != "stopping" {
		t.Errorf("phase %+v, %v", ph, err)
	}
}

func TestParseLogLine(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		want       api.LogLine
	}{
		{"web", "a | b", api.LogLine{Process: "web", Line: "a | b"}},
		{"", "db      | hello", api.LogLine{Process: "db", Line: "hello"}},
		{"", "web | x | y", api.LogLine{Process: "web", Line: "x | y"}},
		{"", "podvisor: reading /x: gone", api.LogLine{Line: "podvisor: reading /x: gone"}},
		{"", " | odd", api.LogLine{Line: " | odd"}},
	} {
		if got := client.ParseLogLine(tt.name, tt.line); got != tt.want {
			t.Errorf("ParseLogLine(%q, %q) = %+v, want %+v", tt.name, tt.line, got, tt.want)
		}
	}
}

// FuzzParseLogLine: any line splits without panicking, and a line with a
// process keeps all of the output after the prefix.
func FuzzParseLogLine(f *testing.F) {
	for _, s := range []string{"db | x", "db      | a | b", " | ", "", "a b | c", "\xff | \x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l := client.ParseLogLine("", line)
		if l.Process == "" && l.Line != line {
			t.Fatalf("no process, yet the line changed: %q -> %q", line, l.Line)
		}
		if l.Process != "" && !strings.HasSuffix(line, " | "+l.Line) {
			t.Fatalf("%q -> %+v loses output", line, l)
		}
	})
}

// FuzzEventStream: any bytes parse into frames or an error, never a panic
// or a frame without a name or data.
func FuzzEventStream(f *testing.F) {
	for _, s := range []string{"event: status\ndata: {}\n\n", ": hb\n\n", "data: x\n\n\n", "event:\n\n", "event: a\r\ndata: 1\r\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		evs, _ := client.ReadEvents(io.NopCloser(strings.NewReader(s)))
		for _, e := range evs {
			if e.Name == "" && e.Data == nil {
				t.Fatalf("empty frame from %q", s)
			}
		}
	})
}
