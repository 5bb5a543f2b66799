package config

import (
	"strings"
	"testing"
)

// The grpc kind and its keys (service, tls), and h2c on an http check.
func TestGRPCAndH2CProbeKeys(t *testing.T) {
	src := "processes:\n  a:\n    command: [a]\n    live: {grpc: \"127.0.0.1:9090\", service: pkg.Svc, tls: true}\n" +
		"    ready: {http: \"http://127.0.0.1:8080/\", h2c: true}\n"
	cfg, err := Parse("procs.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Processes["a"]
	if l := p.Live; l.Kind != ProbeGRPC || l.Target != "127.0.0.1:9090" || l.Service != "pkg.Svc" || !l.TLS {
		t.Errorf("live %+v", l)
	}
	if r := p.Ready; r.Kind != ProbeHTTP || !r.H2C {
		t.Errorf("ready %+v", r)
	}
	for doc, want := range map[string]string{
		"live: {http: \"http://127.0.0.1:1/\", service: x}":  "procs.yaml:4:41 processes.a.live: service applies only to a grpc check",
		"live: {grpc: \"127.0.0.1:1\", h2c: true}":           "h2c applies only to a http check",
		"ready: {http: \"https://127.0.0.1:1/\", h2c: true}": "h2c needs an http:// URL",
		"live: {grpc: \"127.0.0.1\"}":                        "invalid grpc check",
		"live: {tcp: \"127.0.0.1:1\", tls: true}":            "tls applies only to a grpc check",
	} {
		_, err := Parse("procs.yaml", []byte("processes:\n  a:\n    command: [a]\n    "+doc+"\n"), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", doc, err, want)
		}
	}
}
