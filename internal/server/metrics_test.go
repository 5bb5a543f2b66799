package server

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/podvisor/podvisor/internal/metrics"

	"github.com/podvisor/podvisor/internal/supervisor"
)

var snapshotMetricNames = []string{
	"podvisor_ready",
	"podvisor_process_up",
	"podvisor_process_ready",
	"podvisor_process_restarts_total",
	"podvisor_process_last_exit_code",
	"podvisor_process_start_duration_seconds",
}

func TestProcessMetricsFollowSnapshot(t *testing.T) {
	src := newFakeSource(fourStates())
	h := New(src, NewMetrics(), Options{})

	const before = `
# HELP podvisor_ready 1 when podvisor is ready (what /readyz answers 200 for), else 0.
# TYPE podvisor_ready gauge
podvisor_ready 0
# HELP podvisor_process_up 1 while a child of the process is alive, else 0.
# TYPE podvisor_process_up gauge
podvisor_process_up{process="api"} 0
podvisor_process_up{process="cache"} 0
podvisor_process_up{process="db"} 1
podvisor_process_up{process="web"} 0
# HELP podvisor_process_ready 1 when the process is ready (or completed, for a oneshot or job), else 0.
# TYPE podvisor_process_ready gauge
podvisor_process_ready{process="api"} 0
podvisor_process_ready{process="cache"} 0
podvisor_process_ready{process="db"} 1
podvisor_process_ready{process="web"} 0
# HELP podvisor_process_restarts_total Times the process has been restarted.
# TYPE podvisor_process_restarts_total counter
podvisor_process_restarts_total{process="api"} 0
podvisor_process_restarts_total{process="cache"} 3
podvisor_process_restarts_total{process="db"} 0
podvisor_process_restarts_total{process="web"} 0
# HELP podvisor_process_last_exit_code Exit code of the last exit (128+N for signal N); absent until the process first exits.
# TYPE podvisor_process_last_exit_code gauge
podvisor_process_last_exit_code{process="cache"} 137
podvisor_process_last_exit_code{process="web"} 1
# HELP podvisor_process_start_duration_seconds Time from spawn to ready of the last start; absent until the process is first ready.
# TYPE podvisor_process_start_duration_seconds gauge
podvisor_process_start_duration_seconds{process="db"} 1.5
`
	compareFamilies(t, "before restart", scrapeHandler(t, h), before, snapshotMetricNames...)

	// The supervisor restarts db after a SIGKILL and it becomes ready
	// faster; cache comes up; the whole pod becomes ready.
	s := fourStates()
	s.Phase, s.Ready, s.NotReady = "running", true, nil
	s.Processes[1] = supervisor.ProcessSnapshot{Name: "cache", Type: "service", State: "running", Pid: 77,
		Up: true, Ready: true, Restarts: 3, ExitCode: intPtr(137), StartDuration: 20 * time.Millisecond}
	s.Processes[2].Restarts = 1
	s.Processes[2].Pid = 4300
	s.Processes[2].ExitCode = intPtr(137)
	s.Processes[2].StartDuration = 250 * time.Millisecond
	src.set(s)

	const after = `
# HELP podvisor_ready 1 when podvisor is ready (what /readyz answers 200 for), else 0.
# TYPE podvisor_ready gauge
podvisor_ready 1
# HELP podvisor_process_up 1 while a child of the process is alive, else 0.
# TYPE podvisor_process_up gauge
podvisor_process_up{process="api"} 0
podvisor_process_up{process="cache"} 1
podvisor_process_up{process="db"} 1
podvisor_process_up{process="web"} 0
# HELP podvisor_process_restarts_total Times the process has been restarted.
# TYPE podvisor_process_restarts_total counter
podvisor_process_restarts_total{process="api"} 0
podvisor_process_restarts_total{process="cache"} 3
podvisor_process_restarts_total{process="db"} 1
podvisor_process_restarts_total{process="web"} 0
# HELP podvisor_process_last_exit_code Exit code of the last exit (128+N for signal N); absent until the process first exits.
# TYPE podvisor_process_last_exit_code gauge
podvisor_process_last_exit_code{process="cache"} 137
podvisor_process_last_exit_code{process="db"} 137
podvisor_process_last_exit_code{process="web"} 1
# HELP podvisor_process_start_duration_seconds Time from spawn to ready of the last start; absent until the process is first ready.
# TYPE podvisor_process_start_duration_seconds gauge
podvisor_process_start_duration_seconds{process="cache"} 0.02
podvisor_process_start_duration_seconds{process="db"} 0.25
`
	names := []string{"podvisor_ready", "podvisor_process_up", "podvisor_process_restarts_total",
		"podvisor_process_last_exit_code", "podvisor_process_start_duration_seconds"}
	compareFamilies(t, "after restart", scrapeHandler(t, h), after, names...)
}

func TestReadyMetricIsZeroDuringTeardown(t *testing.T) {
	s := allReady()
	s.Phase = "stopping"
	const want = `
# HELP podvisor_ready 1 when podvisor is ready (what /readyz answers 200 for), else 0.
# TYPE podvisor_ready gauge
podvisor_ready 0
`
	compareFamilies(t, "teardown", scrape(t, newFakeSource(s), NewMetrics()), want, "podvisor_ready")
}

func TestProbeMetrics(t *testing.T) {
	m := NewMetrics()
	// Durations exact in binary, so sums print exactly.
	m.ProbeObserved("db", "ready", 250*time.Millisecond, true)
	m.ProbeObserved("db", "ready", 500*time.Millisecond, false)
	m.ProbeObserved("db", "live", 3*time.Second, false)
	m.ProbeObserved("db", "live", 20*time.Second, false)
	m.ProbeObserved("web", "live", 500*time.Microsecond, true)

	const want = `
# HELP podvisor_probe_duration_seconds Duration of readiness (probe="ready"), liveness (probe="live") and startup (probe="startup") probe attempts.
# TYPE podvisor_probe_duration_seconds histogram
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.0005"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.001"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.0025"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.005"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.01"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.025"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.05"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.1"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.25"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="0.5"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="1"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="2.5"} 0
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="5"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="10"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="db",le="+Inf"} 2
podvisor_probe_duration_seconds_sum{probe="live",process="db"} 23
podvisor_probe_duration_seconds_count{probe="live",process="db"} 2
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.0005"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.001"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.0025"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.005"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.01"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.025"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.05"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.1"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.25"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="0.5"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="1"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="2.5"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="5"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="10"} 1
podvisor_probe_duration_seconds_bucket{probe="live",process="web",le="+Inf"} 1
podvisor_probe_duration_seconds_sum{probe="live",process="web"} 0.0005
podvisor_probe_duration_seconds_count{probe="live",process="web"} 1
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.0005"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.001"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.0025"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.005"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.01"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.025"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.05"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.1"} 0
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.25"} 1
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="0.5"} 2
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="1"} 2
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="2.5"} 2
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="5"} 2
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="10"} 2
podvisor_probe_duration_seconds_bucket{probe="ready",process="db",le="+Inf"} 2
podvisor_probe_duration_seconds_sum{probe="ready",process="db"} 0.75
podvisor_probe_duration_seconds_count{probe="ready",process="db"} 2
# HELP podvisor_probe_failures_total Probe attempts that failed, by process and probe kind.
# TYPE podvisor_probe_failures_total counter
podvisor_probe_failures_total{probe="live",process="db"} 2
podvisor_probe_failures_total{probe="live",process="web"} 0
podvisor_probe_failures_total{probe="ready",process="db"} 1
`
	compareFamilies(t, "probes", scrape(t, newFakeSource(allReady()), m), want,
		"podvisor_probe_duration_seconds", "podvisor_probe_failures_total")
}

func TestMetricsLint(t *testing.T) {
	m := NewMetrics()
	m.ProbeObserved("db", "ready", time.Millisecond, false)
	body := scrape(t, newFakeSource(fourStates()), m)
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "podvisor_") {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}

func TestRegisterAddsToMetricsEndpoint(t *testing.T) {
	m := NewMetrics()
	c := metrics.NewCounterVec("podvisor_test_extra_total", "Test.")
	if err := m.Register(c); err != nil {
		t.Fatal(err)
	}
	c.Add(2)
	body := do(t, New(newFakeSource(allReady()), m, Options{}), http.MethodGet, "/metrics").Body.String()
	if !strings.Contains(body, "podvisor_test_extra_total 2\n") {
		t.Errorf("/metrics lacks the registered collector:\n%s", body)
	}
	if err := m.Register(c); err == nil {
		t.Error("registering the same collector twice succeeded")
	}
}

// scrape returns /metrics as served, in the text format promtool reads.
func scrape(t *testing.T, src Source, m *Metrics) string {
	t.Helper()
	return scrapeHandler(t, New(src, m, Options{}))
}

func scrapeHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := do(t, h, http.MethodGet, "/metrics")
	if rec.Code != 200 {
		t.Fatalf("GET /metrics = %d\n%s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type = %q, want the text format", ct)
	}
	return rec.Body.String()
}

// compareFamilies checks that the named metric families in an exposition
// are exactly want (HELP, TYPE and every sample), ignoring line order.
func compareFamilies(t *testing.T, what, exposition, want string, names ...string) {
	t.Helper()
	var got []string
	for line := range strings.Lines(exposition) {
		if inFamilies(line, names) {
			got = append(got, strings.TrimSuffix(line, "\n"))
		}
	}
	wantLines := strings.Split(strings.TrimSpace(want), "\n")
	slices.Sort(got)
	slices.Sort(wantLines)
	if !slices.Equal(got, wantLines) {
		t.Errorf("%s: metrics differ\n got:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
}

// inFamilies reports whether a text-format line (comment or sample,
// histogram series included) belongs to one of the named families.
func inFamilies(line string, names []string) bool {
	var name string
	if rest, ok := strings.CutPrefix(line, "# "); ok {
		if f := strings.Fields(rest); len(f) >= 2 {
			name = f[1]
		}
	} else {
		name, _, _ = strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
	}
	if slices.Contains(names, name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(names, base) {
			return true
		}
	}
	return false
}

func TestMetricsEndpointServesEverything(t *testing.T) {
	m := NewMetrics()
	m.ProbeObserved("db", "ready", 2*time.Millisecond, true)
	m.ProbeObserved("db", "live", 2*time.Millisecond, false)
	body := scrape(t, newFakeSource(fourStates()), m)
	names := append([]string{"podvisor_probe_duration_seconds", "podvisor_probe_failures_total",
		"go_goroutines", "process_resident_memory_bytes"}, snapshotMetricNames...)
	for _, name := range names {
		if !strings.Contains(body, "# HELP "+name+" ") {
			t.Errorf("/metrics lacks HELP for %s", name)
		}
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("/metrics lacks samples of %s", name)
		}
	}
	promtoolCheck(t, body)
}

// Process names are validated identifiers, but the exposition must stay
// valid even if a hostile name got through (FAULTS E8), and one unencodable
// name must not take the other series down with it.
func TestMetricsSurviveHostileNames(t *testing.T) {
	s := allReady()
	s.Processes = append(s.Processes,
		supervisor.ProcessSnapshot{Name: "a\"b\nc} x=\"1", Type: "service", State: "running", Up: true},
		supervisor.ProcessSnapshot{Name: "bad\xff", Type: "service", State: "running", Up: true},
	)
	body := scrape(t, newFakeSource(s), NewMetrics())
	if !strings.Contains(body, `podvisor_process_up{process="a\"b\nc} x=\"1"} 1`) {
		t.Errorf("hostile name not escaped:\n%s", grepLines(body, "podvisor_process_up"))
	}
	if !strings.Contains(body, `podvisor_process_up{process="db"} 1`) {
		t.Errorf("valid series lost next to an invalid one:\n%s", grepLines(body, "podvisor_process_up"))
	}
	if strings.Contains(body, "bad\xff") {
		t.Error("invalid UTF-8 label reached the exposition")
	}
	promtoolCheck(t, body)
}

func grepLines(s, substr string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// promtoolCheck runs `promtool check metrics` on an exposition when promtool
// is installed (Debian package prometheus). PODVISOR_REQUIRE_TOOLS=1 turns
// its absence into a failure, for CI.
func promtoolCheck(t *testing.T, exposition string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("promtool not on PATH and PODVISOR_REQUIRE_TOOLS=1")
		}
		t.Log("promtool not on PATH; skipping promtool check metrics")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}
