package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// fakeSource is a Source whose snapshot tests replace at will and whose Ping
// is scripted.
type fakeSource struct {
	snap atomic.Pointer[supervisor.Snapshot]
	ping func(ctx context.Context) error // nil: answers at once
}

func newFakeSource(s supervisor.Snapshot) *fakeSource {
	f := &fakeSource{}
	f.set(s)
	return f
}

func (f *fakeSource) set(s supervisor.Snapshot) { f.snap.Store(&s) }

func (f *fakeSource) Snapshot() supervisor.Snapshot { return *f.snap.Load() }

func (f *fakeSource) Ping(ctx context.Context) error {
	if f.ping == nil {
		return nil
	}
	return f.ping(ctx)
}

func intPtr(v int) *int { return &v }

var (
	t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	t1 = t0.Add(1500 * time.Millisecond)
)

// fourStates has a process in each of the states the tests care about.
func fourStates() supervisor.Snapshot {
	return supervisor.Snapshot{
		Phase:    "starting",
		Ready:    false,
		NotReady: []string{"api", "cache", "web"},
		Processes: []supervisor.ProcessSnapshot{
			{Name: "api", Type: "service", State: "pending", WaitingFor: []string{"db: ready", "migrate: completed"}},
			{Name: "cache", Type: "service", State: "backoff", Restarts: 3, ExitCode: intPtr(137),
				StartedAt: t0, Reason: "exited with code 137"},
			{Name: "db", Type: "service", State: "running", Pid: 4242, Up: true, Ready: true,
				StartedAt: t0, ReadyAt: t1, StartDuration: 1500 * time.Millisecond, Status: "accepting connections"},
			{Name: "web", Type: "oneshot", State: "failed", ExitCode: intPtr(1), Reason: "exited with code 1"},
		},
	}
}

func allReady() supervisor.Snapshot {
	return supervisor.Snapshot{
		Phase: "running",
		Ready: true,
		Processes: []supervisor.ProcessSnapshot{
			{Name: "db", Type: "service", State: "running", Pid: 10, Up: true, Ready: true, StartedAt: t0, ReadyAt: t1},
		},
	}
}

// manyProcesses is a snapshot of n running, ready services.
func manyProcesses(n int) supervisor.Snapshot {
	s := supervisor.Snapshot{Phase: "running", Ready: true}
	for i := range n {
		s.Processes = append(s.Processes, supervisor.ProcessSnapshot{
			Name: fmt.Sprintf("proc-%03d", i), Type: "service", State: "running",
			Pid: 1000 + i, Up: true, Ready: true, Restarts: i % 7, ExitCode: intPtr(i % 3),
			StartedAt: t0, ReadyAt: t1, StartDuration: time.Duration(i) * time.Millisecond,
		})
	}
	return s
}

// do serves one request on h and returns the recorded response. POST and
// PUT carry a small body, as a real client's would.
func do(t testing.TB, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost || method == http.MethodPut {
		body = strings.NewReader("x")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(method, target, body))
	return rec
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// localRequest is httptest.NewRequest for the pod's own address: the Host
// is an IP literal, as the kubelet and port-forward send, where
// httptest's default (example.com) is a name the Host check refuses.
func localRequest(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Host = "127.0.0.1:9464"
	return req
}
