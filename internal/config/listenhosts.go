package config

import (
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxListenHosts bounds listen_hosts: each request is matched against all.
const maxListenHosts = 64

// listenHosts decodes listen_hosts: the DNS names the HTTP listener
// answers to besides IP addresses and localhost (internal/server.Hosts),
// each a name or "*.domain".
func (l *loader) listenHosts(n *yaml.Node, path *keyPath) []string {
	const hint = `a list of names such as [podvisor.example.com, "*.svc.cluster.local"]`
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "expected a list of host names, got %s", describe(n)).Hint = hint
		return nil
	}
	if len(n.Content) > maxListenHosts {
		l.errorf(n, path, "%d host names: at most %d", len(n.Content), maxListenHosts).Hint = `use "*.domain" for every name under a domain`
		return nil
	}
	var out []string
	for i, item := range n.Content {
		ipath := path.elem(i)
		name, ok := l.str(item, ipath)
		if !ok {
			continue
		}
		if _, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
			l.errorf(item, ipath, "%q is an IP address: every IP address is answered already", name).Hint = "list DNS names only"
			continue
		}
		if msg := checkHostName(name); msg != "" {
			l.errorf(item, ipath, "invalid host name %q: %s", name, msg).Hint = hint
			continue
		}
		out = append(out, name)
	}
	return out
}

// checkHostName validates a DNS name, optionally "*." and a domain, with or
// without a trailing dot and without a port; "" when it is well formed.
func checkHostName(s string) string {
	name := strings.TrimSuffix(strings.TrimPrefix(s, "*."), ".")
	switch {
	case name == "":
		return "empty"
	case strings.Contains(name, ":"):
		return "no port: the name is matched on any port"
	case len(name) > 253:
		return "longer than 253 characters"
	case strings.Contains(name, "*"):
		return `"*" only as "*." before a domain`
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return "each dot-separated label has 1 to 63 characters"
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "letters, digits, - and _ only, labels separated by dots"
			}
		}
	}
	return ""
}
