package health

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// grpcServer is the testgrpc helper binary (internal/testgrpc), built once.
var grpcServer struct {
	once sync.Once
	path string
	err  error
}

// startGRPCServer starts grpc-go's health server (internal/testgrpc) and
// returns its address.
func startGRPCServer(t *testing.T, env ...string) string {
	t.Helper()
	grpcServer.once.Do(func() {
		dir, err := os.MkdirTemp("", "testgrpc")
		if err != nil {
			grpcServer.err = err
			return
		}
		grpcServer.path = filepath.Join(dir, "testgrpc")
		// Through the reaper, the test binary's one waiter (main_test.go).
		c, err := proc.Spawn(reaper, proc.Spec{Argv: []string{"go", "build", "-o", grpcServer.path, "../testgrpc"}, Stderr: os.Stderr})
		if err != nil {
			grpcServer.err = err
			return
		}
		if e := <-c.Done(); e.Code() != 0 {
			grpcServer.err = fmt.Errorf("go build ../testgrpc: exit %d", e.Code())
		}
	})
	if grpcServer.err != nil {
		t.Fatal(grpcServer.err)
	}
	file := filepath.Join(t.TempDir(), "addr")
	spawn(t, proc.Spec{Argv: []string{grpcServer.path, file}, Env: append(os.Environ(), env...)})
	var addr []byte
	eventually(t, 30*time.Second, "the gRPC server wrote its address", func() bool {
		addr, _ = os.ReadFile(file)
		return len(addr) > 0
	})
	return string(addr)
}

// A real gRPC health server (grpc-go's) answers podvisor's hand-made call:
// SERVING is success, anything else a failure that says what came back.
func TestGRPCCheckAgainstGRPCGo(t *testing.T) {
	addr := startGRPCServer(t)
	for _, tc := range []struct {
		service string
		ok      bool
		detail  string
	}{
		{"", true, `service "": SERVING`},
		{"up", true, `service "up": SERVING`},
		{"down", false, `service "down": NOT_SERVING`},
		{"nope", false, "code = NotFound desc = unknown service"},
	} {
		c, err := NewGRPCChecker(addr, tc.service, false)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := attempt(c, 10*time.Second)
		if r.OK != tc.ok || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("service %q: %+v, want ok=%v and %q", tc.service, r, tc.ok, tc.detail)
		}
	}
}

// A gRPC server without the health service: a failure naming Unimplemented.
func TestGRPCCheckWithoutHealthService(t *testing.T) {
	addr := startGRPCServer(t, "GRPC_NO_HEALTH=1")
	c, _ := NewGRPCChecker(addr, "", false)
	r, _ := attempt(c, 10*time.Second)
	if r.OK || !strings.Contains(r.Detail, "Unimplemented") {
		t.Errorf("%+v: want a failure naming Unimplemented", r)
	}
}

// Nothing listening: a failure at once, saying the connection was refused.
func TestGRPCCheckRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, _ := NewGRPCChecker(addr, "", false)
	r, _ := attempt(c, 10*time.Second)
	if r.OK || !strings.Contains(r.Detail, "connection refused") {
		t.Errorf("%+v: want connection refused", r)
	}
}

// A server that accepts and never answers: the attempt ends at its
// deadline and says so.
func TestGRPCCheckTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c, _ := NewGRPCChecker(ln.Addr().String(), "", false)
	r, _ := attempt(c, 200*time.Millisecond)
	if r.OK || !strings.HasPrefix(r.Detail, "timeout after") {
		t.Errorf("%+v: want a timeout", r)
	}
}

// An HTTP/1.1 server is no gRPC server: the h2c preface fails.
func TestGRPCCheckAgainstHTTP1(t *testing.T) {
	addr := serve(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	c, _ := NewGRPCChecker(addr, "", false)
	if r, _ := attempt(c, 10*time.Second); r.OK {
		t.Errorf("%+v: want a failure", r)
	}
}

// h2c httpGet: the request arrives as HTTP/2 without TLS; an HTTP/1.1-only
// server does not answer it.
func TestH2CCheck(t *testing.T) {
	protos := make(chan int, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos <- r.ProtoMajor
		w.WriteHeader(http.StatusNoContent)
	})
	c, err := NewH2CChecker("http://" + serve(t, true, h) + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := attempt(c, 10*time.Second); !r.OK || r.Detail != "HTTP 204" {
		t.Errorf("%+v: want HTTP 204", r)
	}
	if p := <-protos; p != 2 {
		t.Errorf("the server saw HTTP/%d, want 2", p)
	}
	c, _ = NewH2CChecker("http://" + serve(t, false, h) + "/ready")
	if r, _ := attempt(c, 10*time.Second); r.OK {
		t.Errorf("%+v: an HTTP/1.1-only server answered h2c", r)
	}
	if _, err := NewH2CChecker("https://127.0.0.1:1/"); err == nil {
		t.Error("h2c accepted an https URL")
	}
}

// serve runs h on 127.0.0.1 with HTTP/1.1 only, or h2c only, until the
// test ends.
func serve(t testing.TB, h2c bool, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	if h2c {
		srv.Protocols.SetUnencryptedHTTP2(true)
	} else {
		srv.Protocols.SetHTTP1(true)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
