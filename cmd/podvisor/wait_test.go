package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

func runWait(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = cmdWait(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCmdWaitUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no target", nil, "exactly one of"},
		{"two targets", []string{"--tcp", "127.0.0.1:1", "--file", "/x"}, "exactly one of"},
		{"exec and another", []string{"--file", "/x", "--exec", "true"}, "exactly one of"},
		{"exec without command", []string{"--exec"}, "--exec needs a command"},
		{"exec with only --", []string{"--exec", "--"}, "--exec needs a command"},
		{"stray argument", []string{"--file", "/x", "extra"}, `unexpected argument "extra"`},
		{"bad duration", []string{"--file", "/x", "--timeout", "soon"}, "invalid value"},
		{"zero timeout", []string{"--file", "/x", "--timeout", "0s"}, "must be positive"},
		{"negative interval", []string{"--file", "/x", "--interval", "-1s"}, "must be positive"},
		{"unknown flag", []string{"--grpc", "x"}, "not defined"},
		{"bad url", []string{"--http", "ftp://x/"}, "scheme"},
		{"tcp without port", []string{"--tcp", "localhost"}, "missing port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWait(tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.msg) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr, exitUsage, tt.msg)
			}
		})
	}
}

func TestCmdWaitHelp(t *testing.T) {
	code, _, stderr := runWait("-h")
	if code != exitOK || !strings.Contains(stderr, "-exec") {
		t.Errorf("exit %d, stderr %q; want usage and exit 0", code, stderr)
	}
}

func TestSplitExec(t *testing.T) {
	tests := []struct {
		args        []string
		flags, argv string
		found       bool
	}{
		{[]string{"--timeout", "5s", "--exec", "pg_isready", "-h", "db"}, "--timeout 5s", "pg_isready -h db", true},
		{[]string{"-exec", "--", "ls", "--timeout"}, "", "ls --timeout", true},
		{[]string{"--file", "--exec"}, "--file --exec", "", false}, // a file named --exec
		{[]string{"--timeout=5s", "--exec", "true"}, "--timeout=5s", "true", true},
		{[]string{"--tcp", "x:1", "--", "--exec"}, "--tcp x:1 -- --exec", "", false},
	}
	for _, tt := range tests {
		flags, argv, found := splitExec(tt.args)
		if strings.Join(flags, " ") != tt.flags || strings.Join(argv, " ") != tt.argv || found != tt.found {
			t.Errorf("splitExec(%q) = %q, %q, %v; want %q, %q, %v", tt.args, flags, argv, found, tt.flags, tt.argv, tt.found)
		}
	}
}

func TestCmdWaitHTTP(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	code, stdout, stderr := runWait("--http", srv.URL+"/healthz", "--interval", "10ms", "--timeout", "30s")
	if code != exitOK || n.Load() != 3 || !strings.Contains(stdout, "ready") {
		t.Errorf("exit %d after %d requests, stdout %q, stderr %q; want 0 after 3", code, n.Load(), stdout, stderr)
	}
}

func TestCmdWaitTimeoutSaysWhatItSaw(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	// 2 s, not less: on a loaded machine a shorter budget can run out before
	// the first attempt starts, and then there is nothing "seen" to report.
	code, _, stderr := runWait("--tcp", addr, "--timeout", "2s", "--interval", "50ms")
	want := "podvisor wait: timeout after 2s: " + addr + ": "
	if code != exitFail || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "refused") {
		t.Errorf("exit %d, stderr %q; want %d and %q... connection refused", code, stderr, exitFail, want)
	}
	if took := time.Since(start); took < 2*time.Second || took > 10*time.Second {
		t.Errorf("gave up after %s, want about 2s", took)
	}
}

// The per-attempt failure, not the overall deadline, is what gets reported
// when an attempt hangs until the end.
func TestCmdWaitHangingTarget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	// 2 s: a shorter budget can run out on a loaded machine before the
	// attempt even starts, which is reported differently.
	code, _, stderr := runWait("--http", srv.URL, "--timeout", "2s")
	if code != exitFail || !strings.Contains(stderr, "timeout after 2s: "+srv.URL+": timeout after") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestCmdWaitFile(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	if err := os.WriteFile(present, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWait("--file", present); code != exitOK {
		t.Errorf("existing file: exit %d, stderr %q", code, stderr)
	}
	missing := filepath.Join(dir, "missing")
	code, _, stderr := runWait("--file", missing, "--timeout", "100ms", "--interval", "20ms")
	if code != exitFail || !strings.Contains(stderr, "does not exist") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

func TestCmdWaitExec(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"argv", []string{"--exec", "test", "1", "-eq", "1"}, exitOK, ""},
		{"shell string", []string{"--exec", "test 2 -gt 1"}, exitOK, ""},
		{"flags after --exec are the command's", []string{"--timeout", "10s", "--exec", "sh", "-c", "test $1 = --timeout", "sh", "--timeout"}, exitOK, ""},
		// Fails twice, then succeeds: the third attempt finds the counter at 2.
		{"eventually", []string{"--interval", "10ms", "--exec", "sh", "-c",
			`n=$(cat ` + flag + ` 2>/dev/null || echo 0); echo $((n+1)) > ` + flag + `; test $n -ge 2`}, exitOK, ""},
		{"never", []string{"--timeout", "200ms", "--interval", "20ms", "--exec", "sh", "-c", "echo not yet; exit 4"}, exitFail,
			"timeout after 200ms: sh -c echo not yet; exit 4: exit code 4: not yet"},
		{"not found", []string{"--timeout", "100ms", "--exec", "/nonexistent/x"}, exitFail, "/nonexistent/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWait(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// readyAfter is a supervisor state that turns ready after n snapshots.
type readyAfter struct{ n atomic.Int32 }

func (s *readyAfter) Snapshot() supervisor.Snapshot {
	ready := s.n.Add(-1) < 0
	snap := supervisor.Snapshot{Phase: "running", Ready: ready}
	if !ready {
		snap.Phase, snap.NotReady = "starting", []string{"db"}
	}
	return snap
}
func (s *readyAfter) Ping(context.Context) error { return nil }

// --ready against podvisor's real HTTP handler, as host:port and as a URL.
func TestCmdWaitReady(t *testing.T) {
	src := &readyAfter{}
	src.n.Store(2)
	srv := httptest.NewServer(server.New(src, server.NewMetrics(), server.Options{}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	if code, _, stderr := runWait("--ready", addr, "--interval", "10ms", "--timeout", "30s"); code != exitOK {
		t.Errorf("--ready %s: exit %d, stderr %q", addr, code, stderr)
	}
	if src.n.Load() > -1 {
		t.Errorf("ready without waiting for /readyz to turn 200")
	}
	if code, _, stderr := runWait("--ready", srv.URL, "--timeout", "5s"); code != exitOK {
		t.Errorf("--ready %s: exit %d, stderr %q", srv.URL, code, stderr)
	}
	src.n.Store(1 << 30)
	code, _, stderr := runWait("--ready", srv.URL, "--timeout", "100ms", "--interval", "20ms")
	if code != exitFail || !strings.Contains(stderr, srv.URL+"/readyz: HTTP 503") {
		t.Errorf("not ready: exit %d, stderr %q", code, stderr)
	}
}

func TestReadyzURL(t *testing.T) {
	tests := map[string]string{
		"127.0.0.1:9464":           "http://127.0.0.1:9464/readyz",
		":9464":                    "http://localhost:9464/readyz",
		"http://pod:9464":          "http://pod:9464/readyz",
		"http://pod:9464/":         "http://pod:9464/readyz",
		"https://pod:9464/custom":  "https://pod:9464/custom",
		"http://[::1]:9464/readyz": "http://[::1]:9464/readyz",
	}
	for in, want := range tests {
		if got, err := readyzURL(in); got != want || err != nil {
			t.Errorf("readyzURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
