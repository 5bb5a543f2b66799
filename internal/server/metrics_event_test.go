package server

import (
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/observe"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// TestMetricsOnEvent: probe attempts and reloads the supervisor reports
// reach the metrics; the rest of its events are not theirs.
func TestMetricsOnEvent(t *testing.T) {
	m := NewMetrics()
	for _, e := range []observe.Event{
		{Kind: observe.Probe, Process: "db", Probe: "ready", Took: time.Millisecond, OK: false},
		{Kind: observe.Reload, Why: "applied"},
		{Kind: observe.Spawned, Process: "db", Gen: 1},
	} {
		m.OnEvent(e)
	}
	b, errs := m.Scrape(func() supervisor.Snapshot { return supervisor.Snapshot{} })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out := string(b)
	for _, want := range []string{
		`podvisor_probe_failures_total{probe="ready",process="db"} 1`,
		`podvisor_probe_duration_seconds_count{probe="ready",process="db"} 1`,
		`podvisor_reloads_total{result="applied"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// BenchmarkProbeOnEvent: a probe attempt through the supervisor's hook as
// run wires it (a fan-out to the metrics and the timeline), against
// BenchmarkProbeObserved's direct call.
func BenchmarkProbeOnEvent(b *testing.B) {
	m := NewMetrics()
	on := observe.Fanout(m.OnEvent, func(observe.Event) {})
	e := observe.Event{Kind: observe.Probe, Process: "db", Probe: "ready", Took: 3 * time.Millisecond, OK: true}
	for b.Loop() {
		on(e)
	}
}
