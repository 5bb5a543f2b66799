package health

import (
	"encoding/binary"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
)

// The request is what protobuf itself writes for HealthCheckRequest.
func TestGRPCRequestIsProtobuf(t *testing.T) {
	for _, svc := range []string{"", "a", "grpc.health.v1.Health", string(make([]byte, 300))} {
		frame := grpcRequest(svc)
		want, err := proto.Marshal(&healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		if frame[0] != 0 || binary.BigEndian.Uint32(frame[1:5]) != uint32(len(want)) || string(frame[5:]) != string(want) {
			t.Errorf("service %q: frame % x, want message % x", svc, frame, want)
		}
	}
}

// FuzzParseHealthResponse: whatever a server sends, the decoder never
// panics, and what it accepts protobuf reads the same way (status included).
func FuzzParseHealthResponse(f *testing.F) {
	for _, st := range []healthpb.HealthCheckResponse_ServingStatus{0, 1, 2, 3, 77} {
		b, _ := proto.Marshal(&healthpb.HealthCheckResponse{Status: st})
		f.Add(b)
	}
	for _, s := range []string{"", "\x08", "\x08\x01\x08\x02", "\x12\x03abc\x08\x01", "\x0a\x01", "\x09\x01\x02\x03\x04\x05\x06\x07\x08",
		"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x0d\x01\x02", "\x00\x01", "\x0b\x0c", "\xf8\xff\xff\xff\x0f\x01"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		status, err := parseHealthResponse(b)
		if err != nil {
			return
		}
		var m healthpb.HealthCheckResponse
		if perr := proto.Unmarshal(b, &m); perr != nil {
			t.Fatalf("accepted % x (status %d), protobuf refuses it: %v", b, status, perr)
		}
		if int32(status) != int32(m.Status) {
			t.Fatalf("% x: status %d, protobuf reads %d", b, status, m.Status)
		}
	})
}

// FuzzParseGRPCFrameHeader: a length is accepted only up to the bound, and
// only uncompressed.
func FuzzParseGRPCFrameHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 2})
	f.Add([]byte{1, 0, 0, 0, 2})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseGRPCFrameHeader(b)
		if err != nil {
			return
		}
		if len(b) < 5 || b[0] != 0 || n < 0 || n > maxGRPCMessage || uint32(n) != binary.BigEndian.Uint32(b[1:5]) {
			t.Fatalf("% x: length %d", b, n)
		}
	})
}
