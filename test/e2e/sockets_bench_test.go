package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSocketsRestartBenchmark measures, in one run, failed requests and
// latency while a small HTTP server under steady load is restarted 20
// times: with podvisor holding its socket, and with a plain restart (the
// server binds the port itself, as under every other supervisor). Opt-in:
//
//	PODVISOR_BENCH_SOCKETS=1 go test -run '^TestSocketsRestartBenchmark$' -v ./test/e2e
//
// Loopback only; 8 workers, each a new connection per request, no backoff
// after a failure (as wrk or hey would count). The server takes
// E2E_START_DELAY (100 ms) of start-up work before it accepts.
func TestSocketsRestartBenchmark(t *testing.T) {
	if os.Getenv("PODVISOR_BENCH_SOCKETS") == "" {
		t.Skip("set PODVISOR_BENCH_SOCKETS=1 to run the benchmark")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const restarts, workers = 20, 8
	const own = `    env: {E2E_SOCKET_HELPER: http, E2E_START_DELAY: 100ms, E2E_LISTEN: "ADDR", E2E_REUSEPORT: "1"}`
	modes := []struct{ name, extra string }{
		{"`sockets:` (podvisor holds the listener)", `    sockets: ["tcp://ADDR"]`},
		{"`sockets:` and `overlap`", "    sockets: [\"tcp://ADDR\"]\n    restart: {policy: always, backoff: 10ms, overlap: true}"},
		{"`overlap`, the server binds with SO_REUSEPORT", own + "\n    restart: {policy: always, backoff: 10ms, overlap: true}"},
		{"plain restart (the server binds)", own},
	}
	var rows []string
	for _, m := range modes {
		addr := freeAddr(t)
		conf := `
control: "{{dir}}/c.sock"
processes:
  web:
    command: [SELF]
    env: {E2E_SOCKET_HELPER: http, E2E_START_DELAY: 100ms}
EXTRA
    ready: {log: "^serving$"}
`
		if !strings.Contains(m.extra, "restart:") {
			conf += "    restart: {policy: always, backoff: 10ms}\n"
		}
		if strings.Contains(m.extra, "env:") {
			conf = strings.Replace(conf, "    env: {E2E_SOCKET_HELPER: http, E2E_START_DELAY: 100ms}\n", "", 1)
		}
		conf = strings.NewReplacer("SELF", self, "EXTRA", m.extra).Replace(conf)
		conf = strings.ReplaceAll(conf, "ADDR", addr)
		r := startPodvisor(t, conf, withHTTP())
		eventually(t, 20*time.Second, func() bool { st, _, _, _ := statusOf(t, r, "web"); return st == "running" }, "web not running")
		l := startLoad("http://"+addr+"/", workers)
		l.waitRequests(t, 200)
		t0 := time.Now()
		var restartTook []time.Duration
		for range restarts {
			s := time.Now()
			mustCtl(t, r, 0, "restart", "web")
			restartTook = append(restartTook, time.Since(s))
			l.waitRequests(t, 200)
		}
		l.stop()
		elapsed := time.Since(t0)
		l.mu.Lock()
		lat := slices.Clone(l.took)
		l.mu.Unlock()
		slices.Sort(lat)
		slices.Sort(restartTook)
		pct := func(p float64) time.Duration { return lat[int(float64(len(lat)-1)*p)].Round(100 * time.Microsecond) }
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %v | %v | %v | %v | %v |", m.name, l.ok.Load(), l.failed.Load(),
			pct(0.50), pct(0.99), lat[len(lat)-1].Round(100*time.Microsecond), restartTook[len(restartTook)/2].Round(time.Millisecond), elapsed.Round(10*time.Millisecond)))
		mustCtl(t, r, 0, "stop", "web")
		r.Signal(15)
		r.Wait(30 * time.Second)
	}
	t.Logf("\n| mode | answered | failed | p50 | p99 | max | restart (median, podvisor restart) | run |\n|---|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
