package health

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// directHTTP is the cheap path of an http (not https) probe attempt: one
// fresh TCP connection, one request written in a single write, the response
// parsed by net/http's parser, the body drained up to maxBodyRead, close.
// http.Client with a Transport costs two goroutines (read and write loops)
// and a dial goroutine per connection, plus its buffers; with 100 probes a
// second that was half of podvisor's probing CPU (see docs/BENCHMARKS.md).
//
// The connection is still fresh for every attempt, as the kubelet does: a
// pooled connection would keep answering for a server whose accept loop is
// wedged, and a wedged server must not look ready.
//
// A redirect response is only reported: the caller follows it, if at all,
// through the http.Client.
type directHTTP struct {
	addr string        // host:port to dial
	req  *http.Request // for the response parser (method, URL)
	raw  []byte        // the request bytes
}

func newDirectHTTP(u *url.URL) *directHTTP {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	req := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}
	raw := fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\nConnection: close\r\n\r\n",
		u.RequestURI(), u.Host, userAgent)
	return &directHTTP{addr: net.JoinHostPort(u.Hostname(), port), req: req, raw: raw}
}

// do runs one attempt and returns the status code, and for a redirect the
// Location header.
func (d *directHTTP) do(ctx context.Context) (code int, location string, err error) {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	// Cancellation without a goroutine per attempt: ctx ending moves the
	// deadline into the past, which fails any pending read or write.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write(d.raw); err != nil {
		return 0, "", err
	}
	// Headers are bounded like http.Transport's MaxResponseHeaderBytes.
	br := bufio.NewReaderSize(&io.LimitedReader{R: conn, N: 64<<10 + maxBodyRead}, 4<<10)
	resp, err := http.ReadResponse(br, d.req)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, "", errors.New("server closed the connection without a response (EOF)")
		}
		return 0, "", err
	}
	_, _ = io.CopyN(io.Discard, resp.Body, maxBodyRead)
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		location = resp.Header.Get("Location")
	}
	// Closing with unread data sends RST anyway; without, a zero linger
	// skips our side's FIN handshake and TIME_WAIT (the exchange is over).
	if tc, ok := conn.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) {
				_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0})
			})
		}
	}
	return resp.StatusCode, location, nil
}
