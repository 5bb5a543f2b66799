package health

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func mustHTTP(t *testing.T, url string) Checker {
	t.Helper()
	c, err := NewHTTPChecker(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHTTPStatusCodes(t *testing.T) {
	tests := []struct {
		code   int
		ok     bool
		detail string
	}{
		{200, true, "HTTP 200"},
		{204, true, "HTTP 204"},
		{302, true, "HTTP 302"}, // no Location: nothing to follow, 3xx is success
		{399, true, "HTTP 399"},
		{400, false, "HTTP 400"},
		{404, false, "HTTP 404"},
		{500, false, "HTTP 500"},
		{503, false, "HTTP 503"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.code)
			}))
			defer srv.Close()
			r, _ := attempt(mustHTTP(t, srv.URL), 5*time.Second)
			if r.OK != tt.ok || r.Detail != tt.detail {
				t.Errorf("got %+v, want OK=%v Detail=%q", r, tt.ok, tt.detail)
			}
		})
	}
}

func TestHTTPBecomesHealthy(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := mustHTTP(t, srv.URL+"/healthz")
	var got []bool
	for range 4 {
		r, _ := attempt(c, 5*time.Second)
		got = append(got, r.OK)
	}
	if fmt.Sprint(got) != "[false false true true]" {
		t.Errorf("results %v, want [false false true true]", got)
	}
}

func TestHTTPRequest(t *testing.T) {
	type seen struct {
		ua, method string
		close      bool
	}
	ch := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch <- seen{r.UserAgent(), r.Method, r.Close}
	}))
	defer srv.Close()
	if r, _ := attempt(mustHTTP(t, srv.URL), 5*time.Second); !r.OK {
		t.Fatalf("probe failed: %+v", r)
	}
	got := <-ch
	if got != (seen{"podvisor/probe", "GET", true}) {
		t.Errorf("request %+v, want GET with User-Agent podvisor/probe and Connection: close", got)
	}
}

func TestHTTPTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // hang until the client goes away
	}))
	defer srv.Close()
	r, took := attempt(mustHTTP(t, srv.URL), 200*time.Millisecond)
	if r.OK || !strings.HasPrefix(r.Detail, "timeout after") {
		t.Errorf("got %+v, want a timeout failure", r)
	}
	if took > 2*time.Second {
		t.Errorf("attempt took %s with a 200ms timeout", took)
	}
}

// A hung server must not make each attempt leave a connection (fd) behind.
func TestHTTPNoFDLeak(t *testing.T) {
	var open atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			<-r.Context().Done()
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	hang, fine := mustHTTP(t, srv.URL+"/hang"), mustHTTP(t, srv.URL+"/")
	before := countFDs(t)
	for range 20 {
		attempt(hang, 20*time.Millisecond)
		if r, _ := attempt(fine, 5*time.Second); !r.OK {
			t.Fatalf("probe failed: %+v", r)
		}
	}
	eventually(t, 5*time.Second, "server sees every connection closed", func() bool { return open.Load() == 0 })
	eventually(t, 5*time.Second, "fd count back to its starting level", func() bool { return countFDs(t) <= before+2 })
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestHTTPRedirectSameHost(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	r, _ := attempt(mustHTTP(t, srv.URL+"/a"), 5*time.Second)
	if r.OK || r.Detail != "HTTP 503" || n.Load() != 2 {
		t.Errorf("got %+v after %d requests, want the redirect followed to a 503", r, n.Load())
	}
}

func TestHTTPRedirectOtherHost(t *testing.T) {
	var other atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer target.Close()
	// Same machine, other host name: 127.0.0.1 redirects to localhost.
	loc := strings.Replace(target.URL, "127.0.0.1", "localhost", 1) + "/x"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loc, http.StatusMovedPermanently)
	}))
	defer srv.Close()
	r, _ := attempt(mustHTTP(t, srv.URL), 5*time.Second)
	if !r.OK || !strings.Contains(r.Detail, "not followed") || !strings.Contains(r.Detail, loc) {
		t.Errorf("got %+v, want success with the redirect reported as not followed", r)
	}
	if other.Load() != 0 {
		t.Errorf("the other host got %d requests, want 0", other.Load())
	}
}

func TestHTTPRedirectLoop(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	}))
	defer srv.Close()
	r, _ := attempt(mustHTTP(t, srv.URL+"/loop"), 5*time.Second)
	if r.OK || !strings.Contains(r.Detail, "redirects") {
		t.Errorf("got %+v, want a redirect-loop failure", r)
	}
	if got := n.Load(); got != maxRedirects+1 {
		t.Errorf("%d requests for one probe, want %d", got, maxRedirects+1)
	}
}

// A huge body is not read to the end: the connection is closed after the
// bounded read, so the server fails to send most of it.
func TestHTTPHugeBody(t *testing.T) {
	const size = 256 << 20
	sent := make(chan int64, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		var n int64
		for n < size {
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				break
			}
		}
		sent <- n
	}))
	defer srv.Close()
	r, _ := attempt(mustHTTP(t, srv.URL), 10*time.Second)
	if !r.OK {
		t.Fatalf("got %+v, want success", r)
	}
	if n := <-sent; n >= size {
		t.Errorf("server sent the whole %d-byte body; the probe should close after %d bytes", n, maxBodyRead)
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	r, _ := attempt(mustHTTP(t, "http://"+closedPort(t)+"/"), 5*time.Second)
	if r.OK || !strings.Contains(r.Detail, "refused") {
		t.Errorf("got %+v, want connection refused", r)
	}
}

func TestHTTPPlaintextPortWithTLS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http://", "https://", 1)
	r, took := attempt(mustHTTP(t, url), 2*time.Second)
	if r.OK || took > time.Second {
		t.Errorf("got %+v after %s, want a prompt failure", r, took)
	}
}

func TestNewHTTPCheckerErrors(t *testing.T) {
	for _, u := range []string{"ftp://x/", "http:///path", "://bad", "127.0.0.1:80"} {
		if _, err := NewHTTPChecker(u, nil); err == nil {
			t.Errorf("NewHTTPChecker(%q) accepted", u)
		}
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// The kubelet's rule: a server whose accept loop is wedged (the kernel
// completes the handshake, nobody reads) must not look ready, attempt after
// attempt: each one opens a fresh connection and times out.
func TestHTTPWedgedAcceptLoop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // never accepted
	c := mustHTTP(t, "http://"+ln.Addr().String()+"/healthz")
	for range 3 {
		r, took := attempt(c, 100*time.Millisecond)
		if r.OK || !strings.HasPrefix(r.Detail, "timeout after") {
			t.Fatalf("got %+v, want a timeout failure", r)
		}
		if took > 2*time.Second {
			t.Fatalf("attempt took %s with a 100ms timeout", took)
		}
	}
}

// An https probe does not check the certificate, as the kubelet's does not:
// a self-signed server answering 200 is ready.
func TestHTTPSWithoutCertificateCheck(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if r, _ := attempt(mustHTTP(t, srv.URL), 5*time.Second); !r.OK {
		t.Errorf("got %+v, want success from a self-signed server", r)
	}
}
