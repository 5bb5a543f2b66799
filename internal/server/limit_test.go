package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// A connection inside a handler is never shed while its writes make
// progress: when every open connection is being served, a new one is let
// in beyond the cap to answer a probe, and the served one stays open.
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
	case c := <-accepted:
		if !c.(*limitConn).probeOnly {
			t.Fatal("a connection beyond the cap was let in as a served one")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a new connection waited for a slot")
	}
	_ = c1.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := c1.Read(make([]byte, 1)); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("the served connection was closed: %v", err)
	}
	s1.serving.Add(-1)
	s1.Close()
}

// Issue 34 item 1: at the cap, a served connection whose write has made no
// progress for stuckAfter is closed to make room; one whose write is
// younger is not. The clock is the listener's own, moved by the test.
func TestLimitListenerShedsStuckWriter(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	ln := newLimitListener(raw, 1, func() time.Time { return time.Unix(0, clock.Load()) })
	defer ln.Close()
	accepted := acceptAll(ln)
	c1 := dial(t, raw.Addr().String())
	s1 := (<-accepted).(*limitConn)
	s1.serving.Add(1)
	// A write the client never reads: it blocks once the buffers are full.
	wrote := make(chan error, 1)
	go func() {
		_, err := s1.Write(make([]byte, 64<<20))
		wrote <- err
	}()
	eventually(t, 10*time.Second, "the write is in progress", func() bool { return s1.writingSince.Load() != 0 })
	dial(t, raw.Addr().String())
	if c := (<-accepted).(*limitConn); !c.probeOnly {
		t.Fatal("a writer stuck for no time at all was shed")
	} else {
		c.Close()
	}
	// Once the write has blocked, moving the clock past stuckAfter makes
	// it stuck (a chunk that still went through got the new time: again).
	eventually(t, 10*time.Second, "the stuck writer gives its slot up", func() bool {
		clock.Add(int64(stuckAfter))
		dial(t, raw.Addr().String())
		c := (<-accepted).(*limitConn)
		if c.probeOnly {
			c.Close()
			return false
		}
		t.Cleanup(func() { c.Close() })
		return true
	})
	if err := <-wrote; err == nil {
		t.Fatal("the stuck write succeeded")
	}
	if !drainedToEOF(c1) {
		t.Fatal("the stuck client is still connected")
	}
}

// A connection let in beyond the cap answers a probe, refuses anything
// else with 503, and is closed after one answer.
func TestProbeOnlyConnections(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw, 1)
	mux := http.NewServeMux()
	hold := make(chan struct{})
	held := make(chan struct{})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) { close(held); <-hold })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}\n") })
	srv := NewHTTPServer(mux, Options{})
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { close(hold); srv.Close(); <-done }()
	addr := raw.Addr().String()
	c := dial(t, addr)
	io.WriteString(c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
	<-held // the one slot is being served

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("probe beyond the cap: %d %q close=%v, want 200 and Connection: close", resp.StatusCode, body, resp.Close)
	}
	resp, err = client.Get("http://" + addr + "/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too many connections") {
		t.Errorf("/status beyond the cap: %d %q %v, want 503 with Retry-After", resp.StatusCode, body, resp.Header)
	}
}

// A client that reads slowly keeps its connection through many write
// stalls' worth of time (each chunk has its own deadline), while one that
// stops reading loses it once a chunk makes no progress for the stall.
func TestWriteStallCutsOnlyNonReaders(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(raw, 4, time.Now)
	ln.stall = time.Second
	defer ln.Close()
	accepted := acceptAll(ln)
	const total = 12 << 20
	send := func() <-chan error {
		s := (<-accepted).(*limitConn)
		errc := make(chan error, 1)
		go func() {
			defer s.Close()
			_, err := s.Write(make([]byte, total))
			errc <- err
		}()
		return errc
	}
	reader := dial(t, raw.Addr().String())
	readerDone := send()
	// Read in small bites with pauses shorter than the stall: the whole
	// transfer takes many stalls, each chunk goes through.
	got := 0
	buf := make([]byte, 4<<10)
	start := time.Now()
	for got < total {
		n, err := reader.Read(buf)
		got += n
		if err != nil {
			t.Fatalf("slow reader cut off after %d bytes, %v: %v", got, time.Since(start), err)
		}
		if got%(1<<20) < n {
			time.Sleep(ln.stall / 5) // the reader's pace, not a synchronisation
		}
	}
	if err := <-readerDone; err != nil {
		t.Fatalf("write to the slow reader: %v", err)
	}
	idle := dial(t, raw.Addr().String())
	if err := <-send(); err == nil {
		t.Fatal("a write to a client that never reads succeeded")
	}
	_ = idle
}

// drainedToEOF reports whether the server closed c, reading what it had
// sent before, waiting up to 10 s.
func drainedToEOF(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	return err == nil || errors.Is(err, syscall.ECONNRESET)
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

// When every probe-only connection is taken, a newcomer takes the place of
// one that is not answering a probe (it has not sent its request yet), even
// if a newer one: a flood of connections within a probe's round trip must
// not close the kubelet's connection while its probe is being answered.
// Only when all are inside a handler is the oldest closed.
func TestProbeOnlyEvictsIdleFirst(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(raw, 1, time.Now)
	ln.reserve = 2
	defer ln.Close()
	accepted := acceptAll(ln)
	addr := raw.Addr().String()
	next := func() (net.Conn, *limitConn) {
		c := dial(t, addr)
		return c, (<-accepted).(*limitConn)
	}
	// probes returns the probe-only connections still open (a victim is
	// closed before Accept returns the newcomer).
	probes := func() []*limitConn {
		ln.mu.Lock()
		defer ln.mu.Unlock()
		return append([]*limitConn(nil), ln.probes...)
	}
	_, s0 := next()
	s0.serving.Add(1) // the one slot is being served
	_, p1 := next()
	c2, p2 := next()
	if !p1.probeOnly || !p2.probeOnly {
		t.Fatal("connections beyond the cap are not probe-only")
	}
	p1.serving.Add(1) // the oldest answers a probe; p2 has sent nothing
	_, p3 := next()
	if got := probes(); len(got) != 2 || got[0] != p1 || got[1] != p3 {
		t.Fatalf("probe-only connections after the flood: %v, want p1 (being served) and the newcomer, p2 (idle) closed", got)
	}
	if !closedByPeer(c2) {
		t.Fatal("the idle probe-only connection's client is still connected")
	}
	// Now both are inside a handler: the oldest goes.
	p3.serving.Add(1)
	_, p4 := next()
	if got := probes(); len(got) != 2 || got[0] != p3 || got[1] != p4 {
		t.Fatalf("with every probe-only connection served, want the oldest closed; left: %v", got)
	}
}
