package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
)

func newHandler(src Source, opts Options) http.Handler {
	return New(src, NewMetrics(), opts)
}

func TestReadyz(t *testing.T) {
	stopping := allReady()
	stopping.Phase = "stopping" // Ready still true: the handler must not trust it alone
	stoppingWithNames := fourStates()
	stoppingWithNames.Phase = "stopping"
	noNames := allReady()
	noNames.Ready = false

	tests := []struct {
		name     string
		snap     supervisor.Snapshot
		wantCode int
		wantBody string
	}{
		{"all ready", allReady(), 200, "ok\n"},
		{"not ready lists names", fourStates(), 503, "api\ncache\nweb\n"},
		{"stopping", stopping, 503, "stopping\n"},
		{"stopping and not ready", stoppingWithNames, 503, "stopping\napi\ncache\nweb\n"},
		{"not ready without names", noNames, 503, "not ready\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(newFakeSource(tt.snap), Options{})
			rec := do(t, h, http.MethodGet, "/readyz")
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("GET /readyz = %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type = %q, want text/plain", ct)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", cc)
			}
		})
	}
}

// /readyz must flip to 503 on the very next request once teardown is
// published (k8s #110309), with no caching in between.
func TestReadyzTurns503AtOnceOnTeardown(t *testing.T) {
	src := newFakeSource(allReady())
	h := newHandler(src, Options{})
	if rec := do(t, h, http.MethodGet, "/readyz"); rec.Code != 200 {
		t.Fatalf("before teardown: %d, want 200", rec.Code)
	}
	s := allReady()
	s.Phase = "stopping"
	src.set(s)
	if rec := do(t, h, http.MethodGet, "/readyz"); rec.Code != 503 {
		t.Fatalf("after teardown began: %d, want 503", rec.Code)
	}
	var st Status
	if err := json.Unmarshal(do(t, h, http.MethodGet, "/status").Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Ready || st.Phase != "stopping" {
		t.Errorf("/status during teardown: phase %q ready %v, want stopping false", st.Phase, st.Ready)
	}
}

func TestLivez(t *testing.T) {
	const bound = 150 * time.Millisecond
	unblock := make(chan struct{})
	t.Cleanup(func() { close(unblock) })

	tests := []struct {
		name     string
		ping     func(ctx context.Context) error
		wantCode int
	}{
		{"loop answers", nil, 200},
		{"loop reports error", func(context.Context) error { return errors.New("loop gone") }, 503},
		{"loop blocked, ping honours ctx", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, 503},
		{"loop blocked, ping ignores ctx", func(context.Context) error {
			// Bounded, so that a handler that waits for Ping regardless
			// fails the test instead of hanging it.
			select {
			case <-unblock:
			case <-time.After(3 * time.Second):
			}
			return nil
		}, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFakeSource(allReady())
			src.ping = tt.ping
			h := newHandler(src, Options{LiveTimeout: bound})
			start := time.Now()
			rec := do(t, h, http.MethodGet, "/livez")
			elapsed := time.Since(start)
			if rec.Code != tt.wantCode {
				t.Errorf("GET /livez = %d %q, want %d", rec.Code, rec.Body.String(), tt.wantCode)
			}
			if elapsed > bound+time.Second {
				t.Errorf("GET /livez took %v, want about %v at most", elapsed, bound)
			}
			if tt.wantCode == 200 && rec.Body.String() != "ok\n" {
				t.Errorf("body %q, want ok", rec.Body.String())
			}
		})
	}
}

func TestLivezDefaultBoundIsAboutOneSecond(t *testing.T) {
	src := newFakeSource(allReady())
	src.ping = func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	h := newHandler(src, Options{})
	start := time.Now()
	rec := do(t, h, http.MethodGet, "/livez")
	elapsed := time.Since(start)
	if rec.Code != 503 || elapsed < 900*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("GET /livez = %d after %v, want 503 after about 1s", rec.Code, elapsed)
	}
}

var (
	statusKeys  = []string{"phase", "ready", "processes", "generation"}
	processKeys = []string{"name", "type", "state", "pid", "ready", "restarts", "exit_code",
		"started_at", "ready_at", "waiting_for", "status", "reason", "oom_kills", "resources", "stored_fds"}
)

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestStatusJSON(t *testing.T) {
	h := newHandler(newFakeSource(fourStates()), Options{})
	rec := do(t, h, http.MethodGet, "/status")
	if rec.Code != 200 {
		t.Fatalf("GET /status = %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, rec.Body)
	}
	// Exactly the documented keys: nothing else (no command, no env) can ride along.
	if got, want := sortedKeys(doc), slices.Sorted(slices.Values(statusKeys)); !slices.Equal(got, want) {
		t.Errorf("top-level keys %v, want %v", got, want)
	}
	if doc["phase"] != "starting" || doc["ready"] != false {
		t.Errorf("phase/ready = %v/%v, want starting/false", doc["phase"], doc["ready"])
	}
	procs := doc["processes"].([]any)
	byName := map[string]map[string]any{}
	for _, p := range procs {
		pm := p.(map[string]any)
		if got, want := sortedKeys(pm), slices.Sorted(slices.Values(processKeys)); !slices.Equal(got, want) {
			t.Errorf("process keys %v, want %v", got, want)
		}
		byName[pm["name"].(string)] = pm
	}

	// JSON numbers decode as float64; nil is JSON null.
	tests := []struct {
		proc, key string
		want      any
	}{
		{"api", "state", "pending"},
		{"api", "waiting_for", []any{"db: ready", "migrate: completed"}},
		{"api", "exit_code", nil},
		{"api", "started_at", nil},
		{"api", "pid", 0.0},
		{"cache", "state", "backoff"},
		{"cache", "exit_code", 137.0},
		{"cache", "restarts", 3.0},
		{"cache", "reason", "exited with code 137"},
		{"cache", "ready_at", nil},
		{"db", "state", "running"},
		{"db", "type", "service"},
		{"db", "pid", 4242.0},
		{"db", "ready", true},
		{"db", "started_at", "2025-03-01T12:00:00.123456789Z"},
		{"db", "ready_at", "2025-03-01T12:00:01.623456789Z"},
		{"db", "waiting_for", []any{}},
		{"db", "status", "accepting connections"},
		{"web", "type", "oneshot"},
		{"web", "state", "failed"},
		{"web", "exit_code", 1.0},
		{"web", "ready", false},
	}
	for _, tt := range tests {
		got, ok := byName[tt.proc][tt.key]
		if !ok {
			t.Errorf("%s.%s missing", tt.proc, tt.key)
			continue
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(tt.want)
		if string(gj) != string(wj) {
			t.Errorf("%s.%s = %s, want %s", tt.proc, tt.key, gj, wj)
		}
	}
	// The time format must be RFC 3339 with nanoseconds, as documented.
	if _, err := time.Parse(time.RFC3339Nano, byName["db"]["started_at"].(string)); err != nil {
		t.Errorf("started_at: %v", err)
	}
}

func TestStatusEmptyProcessesIsArray(t *testing.T) {
	h := newHandler(newFakeSource(supervisor.Snapshot{Phase: "starting"}), Options{})
	body := do(t, h, http.MethodGet, "/status").Body.String()
	if !strings.Contains(body, `"processes":[]`) {
		t.Errorf("body %s: want processes as [] not null", body)
	}
}

// No route, including error pages, may echo what a process was started
// with. The snapshot type has no such fields, so the key-set check above is
// the structural guard; this one covers podvisor's own environment and
// every response body, with profiling on.
func TestNoSecretsInAnyResponse(t *testing.T) {
	const canary = "hunter2-7f3c9a1e-canary"
	t.Setenv("PODVISOR_CANARY", canary)
	snap := fourStates()
	src := newFakeSource(snap)
	src.ping = func(context.Context) error { return errors.New("not live") }
	m := NewMetrics()
	m.ProbeObserved("db", "ready", time.Millisecond, true)
	h := New(src, m, Options{LiveTimeout: 50 * time.Millisecond})
	for _, target := range []string{"/readyz", "/livez", "/status", "/metrics", "/nope", "/debug/pprof/",
		"/debug/pprof/cmdline", "/status/..%2F..%2Fetc%2Fpasswd"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			rec := do(t, h, method, target)
			if strings.Contains(rec.Body.String(), canary) {
				t.Errorf("%s %s leaks the canary", method, target)
			}
			for k, vs := range rec.Header() {
				if strings.Contains(strings.Join(vs, " "), canary) {
					t.Errorf("%s %s leaks the canary in header %s", method, target, k)
				}
			}
		}
	}
	if os.Getenv("PODVISOR_CANARY") != canary {
		t.Fatal("canary not set; the test proves nothing")
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	h := newHandler(newFakeSource(allReady()), Options{})
	for _, target := range []string{"/readyz", "/livez", "/status", "/metrics"} {
		if rec := do(t, h, http.MethodHead, target); rec.Code != 200 {
			t.Errorf("HEAD %s = %d, want 200", target, rec.Code)
		}
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			rec := do(t, h, method, target)
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d, want 405", method, target, rec.Code)
				continue
			}
			allow := rec.Header().Get("Allow")
			if !strings.Contains(allow, "GET") || !strings.Contains(allow, "HEAD") || strings.Contains(allow, method) {
				t.Errorf("%s %s: Allow = %q, want GET and HEAD only", method, target, allow)
			}
		}
	}
}

func TestHeadHasNoBody(t *testing.T) {
	srv := httptest.NewServer(newHandler(newFakeSource(fourStates()), Options{}))
	t.Cleanup(srv.Close)
	resp, err := http.Head(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("HEAD /readyz = %d, want 503", resp.StatusCode)
	}
}

func TestUnknownPathsAndPprofAre404(t *testing.T) {
	h := newHandler(newFakeSource(allReady()), Options{})
	for _, target := range []string{"/", "/nope", "/readyz/extra", "/debug/pprof/", "/debug/pprof/heap",
		"/debug/pprof/cmdline", "/status/..%2F..%2Fetc%2Fpasswd", "/metrics/x"} {
		if pprofBuilt && strings.HasPrefix(target, "/debug/pprof/") && target != "/debug/pprof/cmdline" {
			continue // TestPprofBuiltIn
		}
		if rec := do(t, h, http.MethodGet, target); rec.Code != 404 {
			t.Errorf("GET %s = %d, want 404", target, rec.Code)
		}
	}
}

// TestPprofBuiltIn runs in `make test` as
// `go test -tags podvisor_pprof -run Pprof ./internal/server/`.
func TestPprofBuiltIn(t *testing.T) {
	if !pprofBuilt {
		t.Skip("built without -tags podvisor_pprof")
	}
	h := newHandler(newFakeSource(allReady()), Options{})
	for _, target := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/symbol"} {
		if rec := do(t, h, http.MethodGet, target); rec.Code != 200 {
			t.Errorf("GET %s = %d, want 200", target, rec.Code)
		}
	}
	// The command line stays private even with profiling on.
	if rec := do(t, h, http.MethodGet, "/debug/pprof/cmdline"); rec.Code != 404 {
		t.Errorf("GET /debug/pprof/cmdline = %d, want 404", rec.Code)
	}
	if rec := do(t, h, http.MethodPost, "/debug/pprof/symbol"); rec.Code != 405 {
		t.Errorf("POST /debug/pprof/symbol = %d, want 405", rec.Code)
	}
}

func TestRequestBodyBounded(t *testing.T) {
	h := newHandler(newFakeSource(allReady()), Options{})
	req := localRequest(http.MethodGet, "/readyz", strings.NewReader(strings.Repeat("x", 64<<10)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("GET /readyz with a 64 KiB body = %d, want 413", rec.Code)
	}
}
