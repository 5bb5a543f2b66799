package health

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// React latency of the NOTIFY_SOCKET source: from the sender's write to the
// deliver callback. "self" is a message from the supervised pid itself;
// "descendant" needs one /proc parent lookup.
func BenchmarkNotifySocketReact(b *testing.B) {
	for _, bc := range []struct {
		name string
		root int
	}{{"self", os.Getpid()}, {"descendant", os.Getppid()}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := NewNotifySocket(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan struct{}, 1)
			done := make(chan error, 1)
			go func() {
				done <- s.Run(bc.root, func(Notification) { got <- struct{}{} }, func(r string) { b.Error(r) })
			}()
			conn, err := net.Dial("unixgram", s.Path())
			if err != nil {
				b.Fatal(err)
			}
			msg := []byte("READY=1\n")
			for b.Loop() {
				if _, err := conn.Write(msg); err != nil {
					b.Fatal(err)
				}
				<-got
			}
			conn.Close()
			s.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// React latency of the fd:N source: from writing the newline to
// WaitNotifyFD returning (pipe setup excluded).
func BenchmarkNotifyFDReact(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		r, w, err := NewNotifyPipe()
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- WaitNotifyFD(r) }()
		start := time.Now()
		if _, err := w.Write([]byte("\n")); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		r.Close()
		w.Close()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/react")
}

func BenchmarkLogMatcher(b *testing.B) {
	re := regexp.MustCompile(`listening on :\d+`)
	line := []byte("2024-01-01T00:00:00Z INFO request served path=/api/v1/items status=200 took=1.2ms")
	b.Run("non-matching line", func(b *testing.B) {
		m := NewLogMatcher(re, func(string) {})
		for b.Loop() {
			m.Feed(line)
		}
	})
	b.Run("after ready", func(b *testing.B) {
		m := NewLogMatcher(re, func(string) {})
		m.Feed([]byte("listening on :8080"))
		for b.Loop() {
			m.Feed(line)
		}
	})
	b.Run("react", func(b *testing.B) {
		ready := []byte("http: listening on :8080")
		fired := 0
		for b.Loop() {
			NewLogMatcher(re, func(string) { fired++ }).Feed(ready)
		}
		if fired != b.N {
			b.Fatalf("fired %d times for %d matches", fired, b.N)
		}
	})
}

// cpuTime is this process's user+system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// probeCost runs c b.N times and reports the CPU time per probe, and what
// 100 such probes a second (100 processes at interval 1s) cost as a share of
// one core. The peer runs in this process too, so its CPU is included: the
// figure is an upper bound for podvisor's side.
func probeCost(b *testing.B, c Checker) {
	cpu0 := cpuTime(b)
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r := c.Check(ctx)
		cancel()
		if !r.OK {
			b.Fatal(r.Detail)
		}
	}
	perProbe := float64((cpuTime(b) - cpu0).Nanoseconds()) / float64(b.N)
	b.ReportMetric(perProbe, "cpu-ns/probe")
	b.ReportMetric(perProbe*100/1e9*100, "%core@100/s")
}

func BenchmarkHTTPProbe(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := NewHTTPChecker(srv.URL+"/healthz", nil)
	if err != nil {
		b.Fatal(err)
	}
	probeCost(b, c)
}

func BenchmarkTCPProbe(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	c, err := NewTCPChecker(l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	probeCost(b, c)
}
