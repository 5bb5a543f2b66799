package server

import (
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
)

func TestWriteStatusTable(t *testing.T) {
	now := t0.Add(time.Hour + 2*time.Minute + 3*time.Second)
	var b strings.Builder
	if err := WriteStatusTable(&b, NewStatus(fourStates()), now); err != nil {
		t.Fatal(err)
	}
	const want = `podvisor: starting, not ready
NAME   TYPE     STATE    READY  PID   CPU%  MEM  RESTARTS  LAST EXIT  UPTIME  DETAIL
api    service  pending  no     -     -     -    0         -          -       waiting for db: ready, migrate: completed
cache  service  backoff  no     -     -     -    3         137        -       exited with code 137
db     service  running  yes    4242  -     -    0         -          1h2m    accepting connections
web    oneshot  failed   no     -     -     -    0         1          -       exited with code 1
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteStatusTableReady(t *testing.T) {
	var b strings.Builder
	if err := WriteStatusTable(&b, NewStatus(allReady()), t0.Add(45*time.Second)); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "podvisor: running, ready" {
		t.Errorf("summary line %q", first)
	}
	if !strings.Contains(b.String(), " 45s ") {
		t.Errorf("uptime 45s missing:\n%s", b.String())
	}
}

// Text that came over the network must not break rows or reach the terminal
// as escape sequences.
func TestWriteStatusTableStripsControlCharacters(t *testing.T) {
	s := supervisor.Snapshot{Phase: "running", Processes: []supervisor.ProcessSnapshot{
		{Name: "a", Type: "service", State: "failed", Reason: "bad\x1b[31m\nnext\tline\r"},
		{Name: "b", Type: "service", State: "running", Status: "ok\x07"},
	}}
	var b strings.Builder
	if err := WriteStatusTable(&b, NewStatus(s), t0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\r\x07\t") {
		t.Errorf("control characters in table: %q", out)
	}
	if lines := strings.Count(out, "\n"); lines != 4 {
		t.Errorf("table has %d lines, want 4 (summary, header, 2 rows):\n%s", lines, out)
	}
}

func TestShortDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{59 * time.Second, "59s"},
		{61 * time.Second, "1m1s"},
		{time.Hour + 2*time.Minute + 3*time.Second, "1h2m"},
		{49*time.Hour + 30*time.Minute, "2d1h"},
	}
	for _, tt := range tests {
		if got := shortDuration(tt.d); got != tt.want {
			t.Errorf("shortDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
