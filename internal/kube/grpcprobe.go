package kube

import (
	"net"
	"strconv"

	"github.com/podvisor/podvisor/internal/config"
)

// grpc converts a grpc probe: the health service at the pod's address
// (this machine) on port, asked about service, over h2c or, with mode TLS
// (the GRPCContainerProbeTLS gate), TLS without a certificate check.
func (b *builder) grpc(ch *config.Probe, g *GRPCAction, where place) {
	if g.Port < 1 || g.Port > 65535 {
		b.t.errorAt(where.in("port"), ": port %d out of range 1-65535, as the API requires", g.Port)
	}
	switch g.Mode {
	case "", "Plaintext":
	case "TLS":
		ch.TLS = true
	default:
		b.t.errorAt(where.in("mode"), " %q: want Plaintext or TLS", g.Mode)
	}
	ch.Kind, ch.Target = config.ProbeGRPC, net.JoinHostPort(host(""), strconv.Itoa(g.Port))
	if g.Service != nil {
		ch.Service = *g.Service
	}
}

// h2c reads an httpGet probe's protocol (the H2CContainerProbe gate): HTTP2
// is HTTP/2 without TLS with prior knowledge, and the API allows it only
// with scheme HTTP.
func (b *builder) h2c(g *HTTPGetAction, where place) bool {
	switch g.Protocol {
	case "", "HTTP1":
		return false
	case "HTTP2":
		if g.Scheme == "HTTPS" {
			b.t.errorAt(where.in("protocol"), ": HTTP2 needs scheme HTTP (h2c), as the API requires")
			return false
		}
		return true
	}
	b.t.errorAt(where.in("protocol"), " %q: want HTTP1 or HTTP2", g.Protocol)
	return false
}
