package server

import (
	"context"
	"net"
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
	for _, host := range []string{"attacker.example", "attacker.example:9464", "rebind.attacker.example.", "localhost.attacker.example", "LOCALHOST.evil"} {
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
		"localhost", "localhost:9464", "LocalHost.:9464"} {
		if rec := getHost(h, "/status", host); rec.Code != http.StatusOK {
			t.Errorf("GET /status with Host %q: %d %q, want 200", host, rec.Code, rec.Body)
		}
	}
}

// listen_hosts adds names, exact or "*.domain", case and a trailing dot
// aside; a reload's Set replaces them.
func TestListenHostsAllowNames(t *testing.T) {
	hosts := NewHosts([]string{"podvisor.example.com", "*.Svc.Cluster.Local."})
	h := New(newFakeSource(allReady()), NewMetrics(), Options{Hosts: hosts})
	for host, want := range map[string]int{
		"podvisor.example.com":          200,
		"PODVISOR.example.com.:9464":    200,
		"app.ns.svc.cluster.local:9464": 200,
		"svc.cluster.local":             421, // "*." needs a label before the domain
		"evil-svc.cluster.local":        421,
		"example.com":                   421,
		"podvisor.example.com:x":        421, // not a port
		"[podvisor.example.com]":        421,
		"127.0.0.1:99999999":            421,
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
	hosts := NewHosts([]string{"podvisor.example.com", "*.svc.cluster.local"})
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
	})
}

// podvisor status by a name the server refuses says why, in the server's
// words (the fix is in them).
func TestFetchStatusSaysWhyHostRefused(t *testing.T) {
	srv := httptest.NewServer(New(newFakeSource(allReady()), NewMetrics(), Options{}))
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}}}
	_, _, err := FetchStatus(context.Background(), c, "pod.example:9464")
	if err == nil || !strings.Contains(err.Error(), "421") || !strings.Contains(err.Error(), "listen_hosts") {
		t.Errorf("FetchStatus by a refused name: %v, want 421 and the fix", err)
	}
}
