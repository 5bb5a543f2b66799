package client_test

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
	"github.com/podvisor/podvisor/internal/timeline"
)

// The tests run the real handlers (internal/server's HTTP port,
// internal/control's socket) over a fixed snapshot: what the client reads
// is what podvisor serves.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

func exitCode(v int) *int { return &v }

// snapshot has a ready service and a failed oneshot.
func snapshot() supervisor.Snapshot {
	return supervisor.Snapshot{
		Phase: "running", Ready: true, Generation: 1,
		Processes: []supervisor.ProcessSnapshot{
			{Name: "db", Type: "service", State: "running", Pid: 42, Up: true, Ready: true, StartedAt: t0, ReadyAt: t0.Add(time.Second)},
			{Name: "migrate", Type: "oneshot", State: "failed", ExitCode: exitCode(3), Reason: "exited with code 3"},
		},
	}
}

type source struct {
	snap    supervisor.Snapshot
	changed chan struct{}
}

func (s *source) Snapshot() supervisor.Snapshot { return s.snap }
func (s *source) Ping(context.Context) error    { return nil }
func (s *source) Changed() <-chan struct{}      { return s.changed }
func (s *source) Doc(now time.Time) timeline.Doc {
	return timeline.Doc{Start: t0, Now: now, Processes: []timeline.Process{{Name: "db", Type: "service"}}}
}
func newSource(snap supervisor.Snapshot) *source {
	return &source{snap: snap, changed: make(chan struct{})}
}

// serveHTTP runs the HTTP port's handler and returns its address.
func serveHTTP(t *testing.T, src *source) string {
	t.Helper()
	srv := httptest.NewServer(server.New(src, server.NewMetrics(), server.Options{Timeline: src, Events: server.NewEvents(src, nil)}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// backend records commands and keeps the tails.
type backend struct {
	mu    sync.Mutex
	reqs  []string
	tails *logs.Tails
}

func (b *backend) Command(_ context.Context, op string, req control.Request) control.Response {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reqs = append(b.reqs, op)
	if len(req.Names) > 0 && req.Names[0] == "nope" {
		return control.Response{Error: `unknown process "nope"`}
	}
	var rs []control.Result
	for _, n := range req.Names {
		rs = append(rs, control.Result{Name: n, OK: true, Message: op + " " + req.Signal})
	}
	return control.Response{OK: true, Results: rs}
}

func (b *backend) Tail(name string) (*logs.Tail, error) { return b.tails.Get(name), nil }

// LogNames and the rest make b a control.LogBackend: logs without a name.
func (b *backend) LogNames() []string            { return []string{"db", "migrate"} }
func (b *backend) LogFile(string) (string, bool) { return "", false }
func (b *backend) ReopenLogs() int               { return 2 }

// serveSocket runs a control socket as podvisor wires it (with the
// timeline and the event stream) and returns its path.
func serveSocket(t *testing.T, src *source, b *backend) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pvc") // short: a socket path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "c.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := control.NewServer(b, nil)
	srv.Identity = control.Identity{Pid: 7, Config: "/etc/procs.yaml"}
	srv.Handle("GET /v1/timeline", server.TimelineHandler(src))
	srv.Handle("GET /v1/events", server.NewEvents(src, nil).Handler(4))
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return path
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
