package server

import "testing"

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
