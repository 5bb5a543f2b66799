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
// ui.logs every process's output. Its requests carry that foreign name: a
// public name of several labels that the attacker controls. So only names
// no such page can use are served:
//   - IP literals (v4, v6, with or without a port: what the kubelet,
//     Prometheus's pod discovery and kubectl port-forward send), and no
//     Host at all (HTTP/1.0);
//   - a name of one label (no dot: localhost, a compose service, a short
//     Kubernetes Service name), which public DNS does not resolve;
//   - names under suffixes that are never public DNS (localSuffixes):
//     .localhost, .local, .internal, .home.arpa, and Kubernetes's .svc
//     (.svc.cluster.local ends in .local);
//   - the machine's own host name (given to NewHosts: os.Hostname at
//     start), which is the operator's;
//   - the names of the config's listen_hosts ("*.example.com" allows
//     every name under it).
//
// /readyz and /livez answer every name: they say only whether podvisor is
// ready or alive, and a prober may name the pod as it likes.
//
// Set replaces the listen_hosts names (a reload); requests read them
// without a lock.
type Hosts struct {
	self  string                   // the host name, as names; "" for none
	names atomic.Pointer[[]string] // lower case, without a trailing dot
}

// localSuffixes end names that public DNS never resolves (RFC 6761,
// RFC 6762, RFC 8375, ICANN's .internal) or that are Kubernetes's
// in-cluster names.
var localSuffixes = []string{".localhost", ".local", ".internal", ".home.arpa", ".svc"}

// NewHosts returns the check for the host name self (os.Hostname; "" when
// unknown) and names (see listen_hosts).
func NewHosts(self string, names []string) *Hosts {
	h := &Hosts{self: normName(self)}
	h.Set(names)
	return h
}

func normName(n string) string { return strings.TrimSuffix(strings.ToLower(n), ".") }

// Set replaces the allowed names.
func (h *Hosts) Set(names []string) {
	norm := make([]string, 0, len(names))
	for _, n := range names {
		norm = append(norm, normName(n))
	}
	h.names.Store(&norm)
}

// Allowed reports whether a request with this Host header is served. A nil
// Hosts allows what needs no configuration: IP literals, one label and
// the local suffixes.
func (h *Hosts) Allowed(host string) bool {
	if host == "" {
		return true
	}
	name, ok := hostName(host)
	if !ok {
		return false
	}
	if a, err := netip.ParseAddr(name); err == nil {
		// An IP literal; its IPv6 zone, free text to the parser
		// ("::%.attacker.example"), must be what a zone is: an interface
		// name (at most 15 bytes, Linux's IFNAMSIZ, no '/' or space) or
		// its index.
		z := a.Zone()
		return len(z) <= 15 && !strings.ContainsAny(z, "/ \t")
	}
	if host[0] == '[' { // only an IPv6 literal goes in brackets
		return false
	}
	name = normName(name)
	if localName(name) {
		return true
	}
	if h == nil {
		return false
	}
	if h.self != "" && name == h.self {
		return true
	}
	if h.names.Load() == nil {
		return false
	}
	for _, n := range *h.names.Load() {
		if n == name || strings.HasPrefix(n, "*.") && strings.HasSuffix(name, n[1:]) {
			return true
		}
	}
	return false
}

// localName reports whether name (lower case, no trailing dot) is one that
// public DNS never resolves: one label, or under a local suffix (with a
// label before it).
func localName(name string) bool {
	if name == "" {
		return false
	}
	if !strings.Contains(name, ".") {
		return true
	}
	for _, suf := range localSuffixes {
		if len(name) > len(suf) && strings.HasSuffix(name, suf) {
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
			http.Error(w, "misdirected request: podvisor does not answer to the public name "+quoteHost(r.Host)+
				" (DNS rebinding) unless listen_hosts in its config has it; it answers IP addresses, names of one label,"+
				" its host name and names under .localhost .local .internal .home.arpa .svc",
				http.StatusMisdirectedRequest)
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
