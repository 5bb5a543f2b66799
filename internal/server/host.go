package server

import (
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
)

// Hosts decides which names the HTTP port answers to, by the request's
// Host header. A page on another site can have its own DNS name resolve to
// the pod's address (DNS rebinding) and then read what the port serves as
// if it were that site's: the process table, the event stream, with
// ui.logs every process's output. Its requests carry that foreign name.
// So only these are served: IP literals (v4, v6, with or without a port:
// what the kubelet, Prometheus's pod discovery and kubectl port-forward
// send), localhost, no Host at all (HTTP/1.0), and the names of the
// config's listen_hosts ("*.example.com" allows every name under it).
// /readyz and /livez answer every name: they say only whether podvisor is
// ready or alive, and a prober may name the pod as it likes (a Service or
// a compose service name).
//
// Set replaces the names (a reload); requests read them without a lock.
type Hosts struct {
	names atomic.Pointer[[]string] // lower case, without a trailing dot
}

// NewHosts returns the check for names (see listen_hosts).
func NewHosts(names []string) *Hosts {
	h := &Hosts{}
	h.Set(names)
	return h
}

// Set replaces the allowed names.
func (h *Hosts) Set(names []string) {
	norm := make([]string, 0, len(names))
	for _, n := range names {
		norm = append(norm, strings.TrimSuffix(strings.ToLower(n), "."))
	}
	h.names.Store(&norm)
}

// Allowed reports whether a request with this Host header is served. A nil
// Hosts allows IP literals and localhost only.
func (h *Hosts) Allowed(host string) bool {
	if host == "" {
		return true
	}
	name, ok := hostName(host)
	if !ok {
		return false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if host[0] == '[' { // only an IPv6 literal goes in brackets
		return false
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "localhost" {
		return true
	}
	if h == nil || h.names.Load() == nil {
		return false
	}
	for _, n := range *h.names.Load() {
		if n == name || strings.HasPrefix(n, "*.") && strings.HasSuffix(name, n[1:]) {
			return true
		}
	}
	return false
}

// hostName takes the port off a Host header: "[::1]:80" is "::1", "a:80"
// is "a". False when what follows the name is not a port.
func hostName(host string) (string, bool) {
	if rest, ok := strings.CutPrefix(host, "["); ok {
		name, port, ok := strings.Cut(rest, "]")
		if !ok || port != "" && !isPort(strings.TrimPrefix(port, ":")) || port != "" && port[0] != ':' {
			return "", false
		}
		return name, true
	}
	if strings.Count(host, ":") == 1 {
		name, port, _ := strings.Cut(host, ":")
		return name, isPort(port)
	}
	return host, true // a name, or an unbracketed IPv6 literal
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkHost refuses a request for a name hosts does not allow, except
// for the probes.
func checkHost(hosts *Hosts, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !probePaths[r.URL.Path] && !hosts.Allowed(r.Host) {
			http.Error(w, "misdirected request: this podvisor does not answer to the name "+quoteHost(r.Host)+
				"; use its IP address or localhost, or add the name to listen_hosts in its config", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// quoteHost shows a Host header in a message (Go's server has refused
// control characters already; this also keeps it short).
func quoteHost(h string) string { return `"` + printable(h, 100) + `"` }

// printable keeps s to printable ASCII, '"' replaced, and at most max bytes.
func printable(s string, max int) string {
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' {
			return '?'
		}
		return r
	}, s)
}
