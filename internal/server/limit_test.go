package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// acceptAll accepts from ln until it closes, handing each connection on.
func acceptAll(ln net.Listener) <-chan net.Conn {
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	return accepted
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByPeer reports whether the server closed c (a read sees EOF or a
// reset), waiting up to 10 s.
func closedByPeer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// Clients cannot hold more than the cap of podvisor's fds (Hardening H7):
// at the cap, a new connection is accepted and the oldest one not being
// served is closed; a second Close of a connection frees nothing more.
func TestLimitListenerShedsOldestIdle(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw, 2).(*limitListener)
	defer ln.Close()
	accepted := acceptAll(ln)
	c1 := dial(t, raw.Addr().String())
	s1 := <-accepted
	dial(t, raw.Addr().String())
	s2 := <-accepted
	dial(t, raw.Addr().String())
	s3 := <-accepted
	if !closedByPeer(c1) {
		t.Fatal("the oldest idle connection was not closed to make room")
	}
	s1.Close() // already shed: must not free another slot
	ln.mu.Lock()
	open := len(ln.open)
	ln.mu.Unlock()
	if open != 2 {
		t.Errorf("%d connections open, want 2", open)
	}
	s2.Close()
	s3.Close()
}

// A connection inside a handler is never shed: when every open connection
// is being served, a new one waits until a handler finishes.
func TestLimitListenerKeepsServedConnections(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw, 1)
	defer ln.Close()
	accepted := acceptAll(ln)
	c1 := dial(t, raw.Addr().String())
	s1 := (<-accepted).(*limitConn)
	s1.serving.Add(1) // as Serving does while its handler runs
	dial(t, raw.Addr().String())
	select {
	case <-accepted:
		t.Fatal("a connection was let in by shedding one being served")
	case <-time.After(200 * time.Millisecond): // the absence of an event: bounded wait
	}
	_ = c1.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := c1.Read(make([]byte, 1)); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("the served connection was closed: %v", err)
	}
	s1.serving.Add(-1)
	s1.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("closing the served connection did not let the waiting one in")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Slowloris: 500 connections that send half a request header and wait do
// not starve probes. Each probe is a new connection with the kubelet's
// default 1 s timeout, through the same listener and server as podvisor's.
func TestSlowClientsDoNotStarveProbes(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	srv := NewHTTPServer(mux, Options{})
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	const slow = 500
	var wg sync.WaitGroup
	conns := make([]net.Conn, slow)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer c.Close()
		conns[i] = c
		if _, err := io.WriteString(c, "GET /readyz HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	const probes = 20
	errs := make(chan error, probes)
	for i := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get("http://" + addr + "/readyz")
			if err != nil {
				errs <- fmt.Errorf("probe %d: %w", i, err)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("probe %d: status %d", i, resp.StatusCode)
			}
		}()
		wg.Wait() // one after another, as a prober does
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The cap still holds: at most MaxConns of the slow clients are open.
	l := ln.(*limitListener)
	l.mu.Lock()
	open := len(l.open)
	l.mu.Unlock()
	if open > MaxConns {
		t.Errorf("%d connections open, cap %d", open, MaxConns)
	}
	// And the slow clients shed first are closed, not left half-open.
	if !closedByPeer(conns[0]) {
		t.Error("the oldest slow client is still connected")
	}
}
