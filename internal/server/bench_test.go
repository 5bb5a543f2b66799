package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/metrics"
)

// benchHandler serves a 200-process snapshot with probe histograms filled
// in, as a large podvisor would look to a scraper.
func benchHandler(b *testing.B) (http.Handler, *Metrics) {
	src := newFakeSource(manyProcesses(200))
	m := NewMetrics()
	for _, p := range src.Snapshot().Processes {
		m.ProbeObserved(p.Name, "ready", 3*time.Millisecond, true)
		m.ProbeObserved(p.Name, "live", time.Millisecond, false)
	}
	return New(src, m, Options{}), m
}

func benchRoute(b *testing.B, target string) {
	h, _ := benchHandler(b)
	req := localRequest(http.MethodGet, target, nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("GET %s = %d", target, rec.Code)
		}
	}
}

func BenchmarkMetrics200(b *testing.B) { benchRoute(b, "/metrics") }
func BenchmarkReadyz200(b *testing.B)  { benchRoute(b, "/readyz") }
func BenchmarkStatus200(b *testing.B)  { benchRoute(b, "/status") }

// BenchmarkProcessMetricsGather200 isolates the per-process families from
// the runtime figures and the HTTP handler.
func BenchmarkProcessMetricsGather200(b *testing.B) {
	src := newFakeSource(manyProcesses(200))
	b.ReportAllocs()
	for b.Loop() {
		var w metrics.Writer
		writeSnapshot(&w, src.Snapshot())
		if errs := w.Errs(); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkProbeObserved(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for b.Loop() {
		m.ProbeObserved("db", "ready", 3*time.Millisecond, true)
	}
}
