package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestListenPortInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()

	ln, err := Listen(addr)
	if err == nil {
		ln.Close()
		t.Fatalf("Listen(%s) on a taken port succeeded", addr)
	}
	if want := "listen " + addr + ": address already in use"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("error %v does not match EADDRINUSE", err)
	}
}

func TestListen(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()

	_, err = Listen("127.0.0.1:99999")
	if err == nil || !strings.HasPrefix(err.Error(), "listen 127.0.0.1:99999: ") {
		t.Errorf("Listen with a bad port: %v, want an error prefixed with the address", err)
	}
}

func TestNewHTTPServerBoundsEverything(t *testing.T) {
	srv := NewHTTPServer(http.NotFoundHandler(), Options{})
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("a timeout is unbounded: header %v read %v write %v idle %v",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 16<<10 {
		t.Errorf("MaxHeaderBytes = %d, want small and set", srv.MaxHeaderBytes)
	}
	if srv.ErrorLog == nil {
		t.Error("ErrorLog not set")
	}
	custom := NewHTTPServer(http.NotFoundHandler(), Options{ReadHeaderTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second})
	if custom.ReadHeaderTimeout != time.Second || custom.ReadTimeout != 2*time.Second ||
		custom.WriteTimeout != 3*time.Second || custom.IdleTimeout != 4*time.Second {
		t.Errorf("options not applied: %v %v %v %v",
			custom.ReadHeaderTimeout, custom.ReadTimeout, custom.WriteTimeout, custom.IdleTimeout)
	}
}

// serve runs srv on a fresh loopback listener until the test ends.
func serve(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String()
}

// A client that trickles its headers is cut off once ReadHeaderTimeout has
// passed since the request began, however steadily it trickles (FAULTS
// D13), while a normal request meanwhile is served at once.
func TestSlowHeadersAreCutOff(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := NewHTTPServer(New(newFakeSource(allReady()), NewMetrics(), Options{}),
		Options{ReadHeaderTimeout: timeout})
	addr := serve(t, srv)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()

	// Trickle one byte every 10 ms: each byte alone arrives well within the
	// timeout, so only an absolute header deadline stops this.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		req := "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 10000)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := range len(req) {
			if _, err := conn.Write([]byte{req[i]}); err != nil {
				return
			}
			<-tick.C
		}
	}()

	// Meanwhile a well-behaved client is served promptly.
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("normal request during the trickle: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("normal request during the trickle: %d", resp.StatusCode)
	}

	// The server may say 400 before hanging up; what matters is that it
	// hangs up: EOF (a nil error from ReadAll), or a reset because our
	// trickle hit the closed socket. Only our own deadline means "still open".
	_ = conn.SetReadDeadline(time.Now().Add(timeout + 3*time.Second))
	got, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("slow connection still open after %v: %v (read %q)", elapsed, err, got)
	}
	if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 4") {
		t.Errorf("slow connection answered %q, want a 4xx or nothing", got)
	}
	if elapsed < timeout-50*time.Millisecond {
		t.Errorf("closed after %v, before ReadHeaderTimeout %v", elapsed, timeout)
	}
	conn.Close()
	wg.Wait()
}

func TestOversizedHeadersRejected(t *testing.T) {
	srv := NewHTTPServer(New(newFakeSource(allReady()), NewMetrics(), Options{}), Options{})
	addr := serve(t, srv)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"
	go func() { _, _ = conn.Write([]byte(req)) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("64 KiB header: %d, want 431", resp.StatusCode)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines to write.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServerErrorsGoToLogger(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	addr := serve(t, NewHTTPServer(boom, Options{Logger: logger}))
	c := &http.Client{Timeout: 2 * time.Second}
	if resp, err := c.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
	}
	eventually(t, 2*time.Second, "panic logged through slog", func() bool {
		s := logs.String()
		return strings.Contains(s, "level=WARN") && strings.Contains(s, "panic serving")
	})
}

// Malformed input gets an error status or a hang-up, never a panic, and the
// server keeps serving (FAULTS D14).
func TestMalformedRequests(t *testing.T) {
	srv := NewHTTPServer(New(newFakeSource(allReady()), NewMetrics(), Options{}), Options{})
	addr := serve(t, srv)
	for name, raw := range map[string]string{
		"garbage":               "\x00\x01\x02\xff nonsense\r\n\r\n",
		"http2 prior knowledge": "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"huge method":           strings.Repeat("G", 16<<10) + " /readyz HTTP/1.1\r\nHost: x\r\n\r\n",
		"huge url":              "GET /readyz?" + strings.Repeat("a", 16<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			go func() { _, _ = conn.Write([]byte(raw)) }()
			got, err := io.ReadAll(conn)
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("connection neither answered nor closed: %v", err)
			}
			if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 4") && !strings.HasPrefix(string(got), "HTTP/1.1 5") {
				t.Errorf("answer %q, want an error status", got)
			}
		})
	}
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("server stopped serving: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /readyz after malformed requests: %d", resp.StatusCode)
	}
}
