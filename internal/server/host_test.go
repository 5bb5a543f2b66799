package server

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// get serves one GET of path to h with the Host header host.
func getHost(h http.Handler, path, host string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = host
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Issue 34 item 13: a DNS-rebinding page (attacker.example resolving to
// the pod) read /status, the event stream and, with ui.logs, every
// process's output: nothing looked at Host. A foreign DNS name is refused
// with 421 on every route but the probes; IP literals and localhost, with
// or without a port, are served.
func TestForeignHostRefused(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	h := New(newFakeSource(allReady()), NewMetrics(), Options{UI: ui})
	for _, host := range []string{"attacker.example", "attacker.example:9464", "rebind.attacker.example.", "localhost.attacker.example", "LOCALHOST.evil",
		"local.attacker.example", "svc.attacker.example", "app.svc.evil", "x.internal.example", "home.arpa.evil", "x.arpa", "a.b"} {
		for _, path := range []string{"/status", "/metrics", "/", "/ui/api/logs?name=a"} {
			rec := getHost(h, path, host)
			if rec.Code != http.StatusMisdirectedRequest || !strings.Contains(rec.Body.String(), "listen_hosts") {
				t.Errorf("GET %s with Host %s: %d %q, want 421 naming listen_hosts", path, host, rec.Code, rec.Body)
			}
		}
		// Probes are exempt: they reveal readiness only, and a prober may
		// name the pod any way it likes (a Service name, a compose name).
		for _, path := range []string{"/readyz", "/livez"} {
			if rec := getHost(h, path, host); rec.Code != http.StatusOK {
				t.Errorf("GET %s with Host %s: %d, want 200 (probes answer any name)", path, host, rec.Code)
			}
		}
	}
	for _, host := range []string{"", "127.0.0.1", "127.0.0.1:9464", "10.1.2.3:9464", "[::1]", "[::1]:9464", "[fe80::1%25eth0]:9464",
		"localhost", "localhost:9464", "LocalHost.:9464",
		// Names no public DNS has, so no rebinding page can use them:
		// one label (a compose service, a short Service name), and
		// names under .localhost, .local, .internal, .home.arpa and
		// Kubernetes's .svc and .svc.cluster.local.
		"app", "app:9090", "App.", "metrics-sidecar:9464", "ui.localhost", "printer.local:80", "app.ns.svc",
		"app.ns.svc:9090", "app.ns.svc.cluster.local", "app.ns.svc.cluster.local.:9464", "db.internal", "nas.home.arpa"} {
		if rec := getHost(h, "/status", host); rec.Code != http.StatusOK {
			t.Errorf("GET /status with Host %q: %d %q, want 200", host, rec.Code, rec.Body)
		}
	}
	// The 421 says what is served, so the fix is plain.
	rec := getHost(h, "/status", "attacker.example")
	for _, want := range []string{"one label", ".svc", ".local", "host name", "listen_hosts"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("the 421 does not say %q: %s", want, rec.Body)
		}
	}
}

// The machine's own host name (os.Hostname, read once at start) is served
// by default: `curl http://$(hostname):9464/status` in the pod.
func TestOwnHostNameAllowed(t *testing.T) {
	hosts := NewHosts("Pod-7f9c.Example.Net", nil)
	h := New(newFakeSource(allReady()), NewMetrics(), Options{Hosts: hosts})
	for host, want := range map[string]int{
		"pod-7f9c.example.net":           200,
		"POD-7F9C.example.net.:9464":     200,
		"x.pod-7f9c.example.net":         421,
		"pod-7f9c.example.net.evil.test": 421,
	} {
		if rec := getHost(h, "/status", host); rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
	hosts.Set([]string{"other.example"}) // a reload keeps the host name
	if rec := getHost(h, "/status", "pod-7f9c.example.net"); rec.Code != 200 {
		t.Errorf("the host name is refused after Set: %d", rec.Code)
	}
	if NewHosts("", nil).Allowed("evil.example") {
		t.Error("no host name known: a foreign name is served")
	}
}

// listen_hosts adds names, exact or "*.domain", case and a trailing dot
// aside; a reload's Set replaces them.
func TestListenHostsAllowNames(t *testing.T) {
	hosts := NewHosts("", []string{"podvisor.example.com", "*.Pods.Example.Org."})
	h := New(newFakeSource(allReady()), NewMetrics(), Options{Hosts: hosts})
	for host, want := range map[string]int{
		"podvisor.example.com":         200,
		"PODVISOR.example.com.:9464":   200,
		"app.ns.pods.example.org:9464": 200,
		"pods.example.org":             421, // "*." needs a label before the domain
		"evil-pods.example.org":        421,
		"example.com":                  421,
		"podvisor.example.com:x":       421, // not a port
		"[podvisor.example.com]":       421,
		"127.0.0.1:99999999":           421,
	} {
		if rec := getHost(h, "/status", host); rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
	hosts.Set([]string{"other.example"})
	if rec := getHost(h, "/status", "podvisor.example.com"); rec.Code != 421 {
		t.Errorf("a name dropped by Set is still served: %d", rec.Code)
	}
	if rec := getHost(h, "/status", "other.example:9464"); rec.Code != 200 {
		t.Errorf("a name added by Set is refused: %d", rec.Code)
	}
}

// FuzzHostAllowed: whatever the Host header, Allowed never panics, an IP
// literal (with or without a port) is always served, and a name under a
// domain nobody configured never is.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"", "a", "[::1]:80", "127.0.0.1:9464", "x.attacker.example", "[", "]:", "::", "[::1", "a:b:c", "localhost.", "*.x"} {
		f.Add(s)
	}
	for _, s := range []string{"app", "app:9090", "a.svc", "a.svc.cluster.local.", "x.localhost", "nas.home.arpa", "pod-1", "local", ".local", "a..svc"} {
		f.Add(s)
	}
	hosts := NewHosts("pod-1.example.net", []string{"podvisor.example.com", "*.svc.cluster.local"})
	f.Fuzz(func(t *testing.T, host string) {
		ok := hosts.Allowed(host)
		if a, err := netip.ParseAddr(host); err == nil && a.Zone() == "" && !ok {
			t.Errorf("IP literal %q refused", host)
		}
		if ap, err := netip.ParseAddrPort(host); err == nil && ap.Addr().Zone() == "" && !hosts.Allowed(ap.String()) {
			t.Errorf("IP literal with a port %q refused", ap)
		}
		if strings.HasSuffix(strings.ToLower(host), ".attacker.example") && ok {
			t.Errorf("%q allowed", host)
		}
		// Whatever comes before a public domain, it is not served:
		// neither a special suffix nor one label makes it so.
		if h := host + ".attacker.example"; hosts.Allowed(h) || hosts.Allowed(h+":80") {
			t.Errorf("%q allowed", h)
		}
		// A name of one label (letters, digits, '-') is served.
		if isLabel(host) && !ok {
			t.Errorf("one label %q refused", host)
		}
	})
}

func isLabel(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
