package health

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// grpcChecker calls grpc.health.v1.Health/Check over HTTP/2: success is a
// SERVING answer, as the kubelet's gRPC probe counts it. The call is one
// POST that net/http's own HTTP/2 client makes (h2c with prior knowledge,
// or TLS without certificate checks): no gRPC runtime, a few KB of binary
// instead of megabytes (docs/configuration.md, grpc).
//
// Every attempt uses a fresh connection (keep-alives off), as http probes
// do, and no proxy.
type grpcChecker struct {
	url     string
	body    []byte // the framed request, the same for every attempt
	service string
	client  *http.Client
}

var _ Checker = (*grpcChecker)(nil)

// NewGRPCChecker returns a checker that asks the gRPC health service at
// addr (host:port) about service ("" is the server as a whole); useTLS
// speaks TLS without checking the certificate, else h2c.
func NewGRPCChecker(addr, service string, useTLS bool) (Checker, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("grpc probe: %w", err)
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: addr, Path: "/grpc.health.v1.Health/Check"}
	return &grpcChecker{
		url:     u.String(),
		body:    grpcRequest(service),
		service: service,
		client:  &http.Client{Transport: http2Transport(useTLS)},
	}, nil
}

// http2Transport is a transport that speaks only HTTP/2: over TLS (the
// certificate not checked, as for every probe) or h2c with prior knowledge.
func http2Transport(useTLS bool) *http.Transport {
	tr := probeTransport()
	tr.Protocols = new(http.Protocols)
	if useTLS {
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return tr
}

func (c *grpcChecker) Check(ctx context.Context) Result {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.body))
	if err != nil {
		return failure("%v", err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", userAgent)
	if dl, ok := ctx.Deadline(); ok {
		// The server may give up when the probe does (gRPC's own header).
		req.Header.Set("Grpc-Timeout", strconv.FormatInt(max(time.Until(dl).Milliseconds(), 1), 10)+"m")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return attemptFailed(ctx, start, err)
	}
	defer resp.Body.Close()
	status, err := readHealthResponse(resp)
	if err != nil {
		return attemptFailed(ctx, start, err)
	}
	if status != grpcServing {
		return failure("service %s: %s", c.name(), grpcStatusName(status))
	}
	return Result{OK: true, Detail: "service " + c.name() + ": SERVING"}
}

// name is the service as a Detail shows it.
func (c *grpcChecker) name() string {
	if c.service == "" {
		return `""`
	}
	return strconv.Quote(clip(c.service, 100))
}

// readHealthResponse reads a Check answer: HTTP 200, a gRPC content type,
// one message and grpc-status 0 (in the trailers, or in the headers of a
// trailers-only answer, which is how servers report an unknown service).
func readHealthResponse(resp *http.Response) (uint64, error) {
	if code := grpcStatusOf(resp.Header); code > 0 {
		return 0, grpcError(code, resp.Header)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d: not a gRPC answer", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !isGRPCContentType(ct) {
		return 0, fmt.Errorf("content type %q: not a gRPC answer", clip(ct, 100))
	}
	var head [5]byte
	if _, err := io.ReadFull(resp.Body, head[:]); err != nil {
		if errors.Is(err, io.EOF) {
			// No message: the status, if any, says why.
			_, _ = io.CopyN(io.Discard, resp.Body, maxBodyRead)
			if code := grpcStatusOf(resp.Trailer); code > 0 {
				return 0, grpcError(code, resp.Trailer)
			}
			return 0, errors.New("answer without a message")
		}
		return 0, err
	}
	n, err := parseGRPCFrameHeader(head[:])
	if err != nil {
		return 0, err
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, msg); err != nil {
		return 0, fmt.Errorf("reading the message: %w", err)
	}
	// Read to the end, so that the trailers arrive.
	if _, err := io.CopyN(io.Discard, resp.Body, maxBodyRead); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	switch code := grpcStatusOf(resp.Trailer); {
	case code > 0:
		return 0, grpcError(code, resp.Trailer)
	case code < 0:
		return 0, errors.New("answer without grpc-status")
	}
	return parseHealthResponse(msg)
}

// isGRPCContentType accepts application/grpc and its +proto / ;params forms.
func isGRPCContentType(ct string) bool {
	const base = "application/grpc"
	if len(ct) < len(base) || ct[:len(base)] != base {
		return false
	}
	return len(ct) == len(base) || ct[len(base)] == '+' || ct[len(base)] == ';'
}

// grpcStatusOf is the grpc-status in h, or -1 when there is none (or it is
// not a number).
func grpcStatusOf(h http.Header) int {
	v := h.Get("Grpc-Status")
	if v == "" {
		return -1
	}
	code, err := strconv.Atoi(v)
	if err != nil || code < 0 {
		return -1
	}
	return code
}

// grpcError is a failed call as gRPC prints it: the code's name and the
// server's grpc-message (percent-encoded on the wire), clipped.
func grpcError(code int, h http.Header) error {
	msg, err := url.PathUnescape(h.Get("Grpc-Message"))
	if err != nil {
		msg = h.Get("Grpc-Message")
	}
	if code == 12 { // Unimplemented
		return fmt.Errorf("rpc error: code = Unimplemented desc = %s (the server does not implement grpc.health.v1.Health)", clip(msg, 200))
	}
	return fmt.Errorf("rpc error: code = %s desc = %s", grpcCodeName(code), clip(msg, 200))
}
