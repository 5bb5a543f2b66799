package server

import (
	"strings"
	"testing"
	"time"
)

func TestReloadsCounted(t *testing.T) {
	m := NewMetrics()
	m.ReloadObserved("applied")
	m.ReloadObserved("applied")
	m.ReloadObserved("invalid")
	want := `# HELP podvisor_reloads_total Config reloads (podvisor reload or SIGHUP) by result: applied, invalid (the new config has errors; nothing changed) or refused (during teardown).
# TYPE podvisor_reloads_total counter
podvisor_reloads_total{result="applied"} 2
podvisor_reloads_total{result="invalid"} 1
podvisor_reloads_total{result="refused"} 0
`
	compareFamilies(t, "reloads", scrape(t, newFakeSource(allReady()), m), want, "podvisor_reloads_total")
}

func TestStatusTableShowsGeneration(t *testing.T) {
	var b strings.Builder
	st := Status{Phase: "running", Ready: true, Generation: 3, Processes: []ProcessStatus{{Name: "web", Type: "service", State: "stopped", Reason: "stopped by podvisor stop"}}}
	if err := WriteStatusTable(&b, st, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "podvisor: running, ready, config generation 3\n") || !strings.Contains(b.String(), "stopped by podvisor stop") {
		t.Fatalf("table:\n%s", b.String())
	}
	b.Reset()
	st.Generation = 1
	_ = WriteStatusTable(&b, st, time.Now())
	if strings.Contains(b.String(), "generation") {
		t.Fatalf("generation 1 shown:\n%s", b.String())
	}
}
