package health

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The two messages of the gRPC health protocol (grpc.health.v1), written
// and read by hand: a request with one string field and a response with one
// enum field do not earn a protobuf runtime (docs/configuration.md, grpc).

// grpcServing is the serving status of a healthy service; the others are
// named in grpcStatusNames.
const grpcServing = 1

var grpcStatusNames = [...]string{"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"}

// grpcStatusName is the protocol's name of a serving status.
func grpcStatusName(s uint64) string {
	if s < uint64(len(grpcStatusNames)) {
		return grpcStatusNames[s]
	}
	return fmt.Sprintf("status %d", s)
}

// maxGRPCMessage bounds the response message read: the real one is 2 bytes.
const maxGRPCMessage = 4 << 10

// grpcRequest is one length-prefixed message: a HealthCheckRequest naming
// service (field 1, a string; absent when empty, as protobuf writes it).
func grpcRequest(service string) []byte {
	var msg []byte
	if service != "" {
		msg = append(msg, 1<<3|2) // field 1, length-delimited
		msg = binary.AppendUvarint(msg, uint64(len(service)))
		msg = append(msg, service...)
	}
	frame := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg))) // frame[0] = 0: not compressed
	return append(frame, msg...)
}

var errGRPCTruncated = errors.New("truncated message")

// parseGRPCFrameHeader reads the 5-byte prefix of a gRPC message: the
// compressed flag and the length, which must be at most maxGRPCMessage.
func parseGRPCFrameHeader(h []byte) (int, error) {
	if len(h) < 5 {
		return 0, errGRPCTruncated
	}
	if h[0] != 0 {
		// Nothing was offered (no grpc-accept-encoding), so nothing may come compressed.
		return 0, fmt.Errorf("compressed message (flag %d) though no compression was offered", h[0])
	}
	n := binary.BigEndian.Uint32(h[1:5])
	if n > maxGRPCMessage {
		return 0, fmt.Errorf("message of %d bytes, want at most %d", n, maxGRPCMessage)
	}
	return int(n), nil
}

// parseHealthResponse decodes a HealthCheckResponse: its status (field 1,
// varint; the last one wins, as in protobuf). Unknown fields are skipped;
// a missing status is UNKNOWN (protobuf's zero value).
func parseHealthResponse(msg []byte) (uint64, error) {
	var status uint64
	for len(msg) > 0 {
		key, n := binary.Uvarint(msg)
		if n <= 0 {
			return 0, errors.New("bad field key")
		}
		msg = msg[n:]
		field, wire := key>>3, key&7
		if field == 0 || field > 1<<29-1 {
			return 0, fmt.Errorf("field number %d out of range", field)
		}
		switch wire {
		case 0: // varint
			v, n := binary.Uvarint(msg)
			if n <= 0 {
				return 0, errors.New("bad varint")
			}
			msg = msg[n:]
			if field == 1 {
				status = v
			}
		case 1: // fixed64
			if len(msg) < 8 {
				return 0, errGRPCTruncated
			}
			msg = msg[8:]
		case 2: // length-delimited
			l, n := binary.Uvarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) {
				return 0, errGRPCTruncated
			}
			msg = msg[n+int(l):]
		case 5: // fixed32
			if len(msg) < 4 {
				return 0, errGRPCTruncated
			}
			msg = msg[4:]
		default:
			return 0, fmt.Errorf("wire type %d", wire)
		}
		if field == 1 && wire != 0 {
			return 0, fmt.Errorf("status has wire type %d, want a varint", wire)
		}
	}
	return status, nil
}

// grpcCodeNames are the names of gRPC status codes 0-16.
var grpcCodeNames = [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

// grpcCodeName names a grpc-status value.
func grpcCodeName(code int) string {
	if code >= 0 && code < len(grpcCodeNames) {
		return grpcCodeNames[code]
	}
	return fmt.Sprintf("Code(%d)", code)
}
