package e2e

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// hostGet fetches path from r with the Host header host.
func hostGet(t *testing.T, r *Run, path, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.URL(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	code, body, err := apiDo(t, &http.Client{Timeout: scaled(5 * time.Second)}, req)
	if code == 0 {
		t.Fatalf("GET %s (Host %s): %v", path, host, err)
	}
	return code, body
}

// Issue 34 item 13 end to end: with ui.logs on, a request naming a foreign
// host (a DNS-rebinding page) reads nothing; the probes answer it; a name
// in listen_hosts is served, and a reload changes the names. Names that
// are not public DNS (one label, .svc, the host name) are served by default.
func TestHTTP_ForeignHostRefused(t *testing.T) {
	const yaml = "listen_hosts: [pod.example]\nui: {logs: true}\nprocesses:\n  a:\n    command: \"echo secret-line; exec sleep 1000\"\n"
	r := startPodvisor(t, yaml, withHTTP())
	for _, path := range []string{"/status", "/ui/api/logs?name=a", "/events"} {
		if code, body := hostGet(t, r, path, "rebind.attacker.example:9464"); code != http.StatusMisdirectedRequest || strings.Contains(body, "secret") {
			t.Errorf("GET %s for a foreign name: %d %q, want 421", path, code, body)
		}
	}
	if code, _ := hostGet(t, r, "/readyz", "rebind.attacker.example"); code == http.StatusMisdirectedRequest {
		t.Error("/readyz refused a foreign name: probes answer every name")
	}
	eventually(t, 10*time.Second, func() bool {
		code, body := hostGet(t, r, "/ui/api/logs?name=a", "pod.example:9464")
		return code == http.StatusOK && strings.Contains(body, "secret-line")
	}, "the output served for a name in listen_hosts")
	if code, _ := hostGet(t, r, "/status", r.Addr); code != http.StatusOK {
		t.Errorf("GET /status by IP address: %d", code)
	}
	// Names no public DNS resolves are served without listen_hosts: one
	// label (a sidecar's `curl http://app:9464/metrics`, a compose
	// service), Kubernetes's in-cluster names, and the machine's host name.
	self, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"app:9464", "app.ns.svc:9464", "app.ns.svc.cluster.local", "podvisor.internal", self + ":9464"} {
		if code, body := hostGet(t, r, "/status", host); code != http.StatusOK {
			t.Errorf("GET /status with Host %s: %d %q, want 200 (not a public name)", host, code, body)
		}
	}
	if _, body := hostGet(t, r, "/status", "rebind.attacker.example"); !strings.Contains(body, "listen_hosts") || !strings.Contains(body, "one label") {
		t.Errorf("the 421 does not say what is served and the fix: %q", body)
	}
	if err := os.WriteFile(r.Config, []byte(strings.Replace(yaml, "pod.example", "other.example", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Signal(1) // SIGHUP: reload
	eventually(t, 10*time.Second, func() bool {
		code, _ := hostGet(t, r, "/status", "pod.example")
		return code == http.StatusMisdirectedRequest
	}, "the reload dropped pod.example")
	if code, _ := hostGet(t, r, "/status", "other.example"); code != http.StatusOK {
		t.Errorf("a name added by the reload: %d", code)
	}
}
