// The benchmarks' child processes: the test binary re-executed as a stamping
// child (TestMain), and the readiness-hop chain.

package supervisor_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

const benchChildEnv = "PODVISOR_BENCH_CHILD"

// TestMain turns the test binary into a benchmark child when asked to.
func TestMain(m *testing.M) {
	switch mode := os.Getenv(benchChildEnv); {
	case mode == "term100":
		benchChild()
	case strings.HasPrefix(mode, "ready-"):
		hopChild(mode)
	case mode == "restart-stamp":
		restartChild() // commands_bench_test.go
	}
	os.Exit(m.Run())
}

// benchChild reports readiness on fd 3 once its SIGTERM handler is in place,
// waits for SIGTERM, then takes 100ms to exit.
func benchChild() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	if f := os.NewFile(3, "notify"); f != nil {
		_, _ = f.Write([]byte("\n"))
		f.Close()
	}
	<-c
	time.Sleep(100 * time.Millisecond)
	os.Exit(0)
}

func hopChainYAML(self, kind, dir string, port int) string {
	var sb strings.Builder
	sb.WriteString("processes:\n")
	for i := range 10 {
		addr := fmt.Sprintf("127.0.0.1:%d", port+i)
		fmt.Fprintf(&sb, "  h%d:\n    command: [%q]\n    env: {%s: %q, PV_STAMP: %q, PV_ADDR: %q}\n",
			i, self, benchChildEnv, "ready-"+kind, fmt.Sprintf("%s/h%d", dir, i), addr)
		sb.WriteString(readyLine(kind, addr))
		if i > 0 {
			fmt.Fprintf(&sb, "    depends_on: [h%d]\n", i-1)
		}
	}
	return sb.String()
}

func readStamp(b *testing.B, path string) time.Time {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var ns int64
	if _, err := fmt.Sscan(string(data), &ns); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return time.Unix(0, ns)
}

// hopChild signals readiness the configured way, recording the instant, and
// then waits for SIGTERM.
func hopChild(kind string) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	stamp := func() {
		_ = os.WriteFile(os.Getenv("PV_STAMP"), []byte(fmt.Sprint(time.Now().UnixNano())), 0o644)
	}
	switch kind {
	case "ready-log":
		stamp()
		os.Stdout.WriteString("READY\n")
	case "ready-systemd":
		conn, err := net.Dial("unixgram", os.Getenv("NOTIFY_SOCKET"))
		if err != nil {
			os.Exit(3)
		}
		stamp()
		_, _ = conn.Write([]byte("READY=1"))
	case "ready-fd":
		f := os.NewFile(3, "notify")
		stamp()
		_, _ = f.Write([]byte("\n"))
		f.Close()
	case "ready-tcp", "ready-http":
		time.Sleep(50 * time.Millisecond)
		ln, err := net.Listen("tcp", os.Getenv("PV_ADDR"))
		if err != nil {
			os.Exit(3)
		}
		stamp()
		go func() {
			_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		}()
	}
	<-term
	os.Exit(0)
}

// readyLine is the ready: key of a benchmark chain's process for a kind of
// readiness ("" for started, which has none).
func readyLine(kind, addr string) string {
	switch kind {
	case "log":
		return "    ready: {log: \"^READY$\"}\n"
	case "systemd":
		return "    ready: {notify: systemd}\n"
	case "fd":
		return "    ready: {notify: \"fd:3\"}\n"
	case "tcp":
		return fmt.Sprintf("    ready: {tcp: %q, start_interval: 10ms}\n", addr)
	case "http":
		return fmt.Sprintf("    ready: {http: \"http://%s/\", start_interval: 10ms}\n", addr)
	}
	return ""
}
