package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// statusTestSource is a fixed supervisor state behind the real HTTP handler.
type statusTestSource struct{ snap supervisor.Snapshot }

func (s statusTestSource) Snapshot() supervisor.Snapshot { return s.snap }
func (s statusTestSource) Ping(context.Context) error    { return nil }

func startStatusServer(t *testing.T) string {
	t.Helper()
	code := 137
	src := statusTestSource{supervisor.Snapshot{
		Phase:    "running",
		NotReady: []string{"cache"},
		Processes: []supervisor.ProcessSnapshot{
			{Name: "cache", Type: "service", State: "backoff", Restarts: 2, ExitCode: &code, Reason: "exited with code 137"},
			{Name: "db", Type: "service", State: "running", Pid: 4242, Up: true, Ready: true,
				StartedAt: time.Now().Add(-90 * time.Second)},
		},
	}}
	srv := httptest.NewServer(server.New(src, server.NewMetrics(), server.Options{}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func runStatusCmd(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = cmdStatus(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCmdStatusTable(t *testing.T) {
	addr := startStatusServer(t)
	code, out, errOut := runStatusCmd("--addr", addr)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want summary, header and 2 rows, got:\n%s", out)
	}
	if lines[0] != "podvisor: running, not ready" {
		t.Errorf("summary %q", lines[0])
	}
	if f := strings.Fields(lines[1]); f[0] != "NAME" || f[len(f)-1] != "DETAIL" {
		t.Errorf("header %q", lines[1])
	}
	if f := strings.Fields(lines[2]); strings.Join(f[:9], " ") != "cache service backoff no - - - 2 137" {
		t.Errorf("cache row %q", lines[2])
	}
	// CPU% and MEM (f[5], f[6]) are whatever pid 4242 of this machine uses.
	if f := strings.Fields(lines[3]); strings.Join(f[:5], " ") != "db service running yes 4242" || f[7] != "0" || (f[9] != "1m30s" && f[9] != "1m31s") {
		t.Errorf("db row %q", lines[3])
	}
	// Columns are aligned: STATE starts at the same offset on every line.
	col := strings.Index(lines[1], "STATE")
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l[col:], "backoff") && !strings.HasPrefix(l[col:], "running") {
			t.Errorf("misaligned row %q (STATE at %d)", l, col)
		}
	}
}

func TestCmdStatusJSON(t *testing.T) {
	addr := startStatusServer(t)
	code, out, errOut := runStatusCmd("--json", "--addr", addr)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var st server.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("--json output is not the status document: %v\n%s", err, out)
	}
	if st.Phase != "running" || len(st.Processes) != 2 || st.Processes[1].Pid != 4242 {
		t.Errorf("decoded %+v", st)
	}
}

func TestCmdStatusAddrFromEnvironment(t *testing.T) {
	addr := startStatusServer(t)
	_, port, _ := net.SplitHostPort(addr)
	t.Setenv("PODVISOR_ADDR", ":"+port) // ":PORT" means the local host
	if code, _, errOut := runStatusCmd(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestCmdStatusNothingAnswering(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	code, out, errOut := runStatusCmd("--addr", addr)
	if code != 1 || out != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	if want := "podvisor status: no podvisor answering at " + addr + ": connection refused\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

func TestCmdStatusDefaultAddr(t *testing.T) {
	t.Setenv("PODVISOR_ADDR", "")
	// Something may really listen on 9464 here; either way the command must
	// have asked 127.0.0.1:9464.
	if code, _, errOut := runStatusCmd(); code != 0 && !strings.Contains(errOut, " 127.0.0.1:9464: ") {
		t.Errorf("exit %d, stderr %q; want the default address named", code, errOut)
	}
}

func TestCmdStatusUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--addr", "9464"}, {"--bogus"}} {
		if code, _, errOut := runStatusCmd(args...); code != 2 || errOut == "" {
			t.Errorf("status %q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

// TestCmdStatusNextRun: a scheduled job's row says when it runs next
// (issue 35), which /status has as schedule.next_run.
func TestCmdStatusNextRun(t *testing.T) {
	code0 := 0
	src := statusTestSource{supervisor.Snapshot{Phase: "running", Processes: []supervisor.ProcessSnapshot{
		{Name: "backup", Type: "job", State: "completed", ExitCode: &code0,
			NextRun: time.Now().Add(5*time.Minute + 30*time.Second), ScheduledRuns: 2},
		{Name: "db", Type: "service", State: "running", Pid: 4242, Up: true, Ready: true, Status: "accepting connections"},
	}}}
	srv := httptest.NewServer(server.New(src, server.NewMetrics(), server.Options{}))
	t.Cleanup(srv.Close)
	code, out, errOut := runStatusCmd("--addr", srv.Listener.Addr().String())
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want summary, header and 2 rows, got:\n%s", out)
	}
	if !strings.HasPrefix(lines[2], "backup") || !strings.Contains(lines[2], "next run in 5m") {
		t.Errorf("backup row lacks \"next run in 5m…\":\n%s", out)
	}
	if strings.Contains(lines[3], "next run") || !strings.HasSuffix(lines[3], "accepting connections") {
		t.Errorf("db row %q", lines[3])
	}
}
