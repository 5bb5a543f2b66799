package main

import (
	"encoding/xml"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
	"github.com/podvisor/podvisor/internal/timeline"
)

func startTimelineServer(t *testing.T) string {
	t.Helper()
	t0 := time.Now().Add(-time.Minute)
	rec := timeline.New([]timeline.Proc{{Name: "db", Type: "service"}, {Name: "app", Type: "service", DependsOn: []timeline.Dep{{Name: "db", Condition: "ready"}}}}, 0, t0)
	rec.Spawned("db", 1, t0)
	rec.Started("db", 1, 10, t0)
	rec.Ready("db", 1, t0.Add(2*time.Second))
	rec.Spawned("app", 1, t0.Add(2*time.Second))
	rec.Started("app", 1, 11, t0.Add(2*time.Second))
	rec.Ready("app", 1, t0.Add(3*time.Second))
	srv := httptest.NewServer(server.New(&statusTestSource{snap: supervisor.Snapshot{Phase: "running"}}, server.NewMetrics(), server.Options{Timeline: rec}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func runTimelineCmd(args ...string) (int, string, string) {
	var out, errOut strings.Builder
	code := cmdTimeline(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCmdTimeline(t *testing.T) {
	addr := startTimelineServer(t)
	code, out, errOut := runTimelineCmd("--addr", addr)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"* db", "* app", "critical chain", "db   @0s +2.00s  (ready gated the next)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	svg := filepath.Join(t.TempDir(), "t.svg")
	if code, _, errOut := runTimelineCmd("--addr", addr, "--svg", svg); code != 0 {
		t.Fatalf("--svg: exit %d, %s", code, errOut)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, new(struct{})); err != nil || !strings.Contains(string(b), ">app</text>") {
		t.Errorf("SVG not well-formed (%v) or without app:\n%.300s", err, b)
	}
	if code, out, _ := runTimelineCmd("--addr", addr, "--json"); code != 0 || !strings.Contains(out, `"critical_chain":[{"process":"db"`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

func TestCmdTimelineUsage(t *testing.T) {
	for _, args := range [][]string{{"--json", "--svg", "x"}, {"extra"}, {"--addr", "nocolon"}} {
		if code, _, errOut := runTimelineCmd(args...); code != exitUsage || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want %d with a message", args, code, errOut, exitUsage)
		}
	}
}
