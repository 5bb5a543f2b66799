package kube

import (
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// A grpc probe (GA since 1.27, mode TLS since 1.37) and an httpGet probe
// with protocol HTTP2 (h2c, 1.37) become podvisor's grpc and h2c checks.
func TestGRPCAndH2CProbes(t *testing.T) {
	doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: app\n    command: [x]\n" +
		"    livenessProbe: {grpc: {port: 9000, service: pkg.Svc}}\n" +
		"    startupProbe: {grpc: {port: 9001, mode: TLS}}\n" +
		"    readinessProbe: {httpGet: {port: 8080, path: /ready, protocol: HTTP2}}\n"
	res := play(t, doc, Options{})
	load(t, res)
	q := res.Procs.Process("app")
	if l := q.Live; l == nil || l.Kind != config.ProbeGRPC || l.Target != "127.0.0.1:9000" || l.Service != "pkg.Svc" || l.TLS {
		t.Errorf("live %+v: want grpc 127.0.0.1:9000, service pkg.Svc, h2c", l)
	}
	if s := q.Startup; s == nil || s.Kind != config.ProbeGRPC || s.Target != "127.0.0.1:9001" || s.Service != "" || !s.TLS {
		t.Errorf("startup %+v: want grpc 127.0.0.1:9001 over TLS", s)
	}
	if r := q.Ready; r == nil || r.Kind != config.ProbeHTTP || r.Target != "http://127.0.0.1:8080/ready" || !r.H2C {
		t.Errorf("ready %+v: want an h2c http check", r)
	}
	for _, w := range res.Warnings {
		t.Errorf("unexpected warning %q", w)
	}
}
