package health

import (
	"net/http"
	"testing"
)

// The CPU of one gRPC health check against one httpGet check
// (docs/BENCHMARKS.md section 24). As in BenchmarkHTTPProbe the peer is a
// net/http server in this process, its CPU included: here an h2c server
// answering the health call with SERVING as grpc-go does (one message, then
// grpc-status 0 in the trailers), so both figures count the same kind of
// server.
func BenchmarkGRPCProbe(b *testing.B) {
	serving := []byte{0, 0, 0, 0, 2, 1 << 3, grpcServing}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = w.Write(serving)
		w.Header().Set("Grpc-Status", "0")
	})
	c, err := NewGRPCChecker(serve(b, true, h), "", false)
	if err != nil {
		b.Fatal(err)
	}
	probeCost(b, c)
}

// BenchmarkH2CProbe is an httpGet check with protocol HTTP2.
func BenchmarkH2CProbe(b *testing.B) {
	c, err := NewH2CChecker("http://" + serve(b, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})) + "/healthz")
	if err != nil {
		b.Fatal(err)
	}
	probeCost(b, c)
}
