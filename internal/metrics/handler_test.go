package metrics

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHandlerServesGzipWhenAccepted(t *testing.T) {
	c := NewCounterVec("podvisor_test_total", "Test.", "result")
	c.Add(5, "ok")
	h := Handler(func() []Collector { return []Collector{c} }, 2, nil)
	for _, tc := range []struct {
		accept string
		gzip   bool
	}{{"", false}, {"gzip", true}, {"deflate, gzip;q=0.5", true}, {"gzip;q=0", false}, {"identity", false}} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.accept != "" {
			req.Header.Set("Accept-Encoding", tc.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); ct != ContentType {
			t.Errorf("%q: Content-Type %q", tc.accept, ct)
		}
		body := rec.Body.String()
		if got := rec.Header().Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Fatalf("Accept-Encoding %q: gzip %v, want %v", tc.accept, got, tc.gzip)
		}
		if tc.gzip {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(zr)
			body = string(b)
		}
		if !strings.Contains(body, `podvisor_test_total{result="ok"} 5`) {
			t.Errorf("%q: body %q", tc.accept, body)
		}
	}
}

// blocker is a collector that holds its scrape until released.
type blocker struct {
	entered chan struct{}
	release chan struct{}
}

func (b blocker) Collect(w *Writer) {
	b.entered <- struct{}{}
	<-b.release
}

func TestHandlerShedsScrapesOverTheLimit(t *testing.T) {
	b := blocker{entered: make(chan struct{}), release: make(chan struct{})}
	var errs []error
	h := Handler(func() []Collector { return []Collector{b} }, 2, func(e []error) { errs = append(errs, e...) })
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if rec.Code != 200 {
				t.Errorf("held scrape = %d", rec.Code)
			}
		})
	}
	for range 2 {
		select {
		case <-b.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("scrapes never reached the collector")
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("third concurrent scrape = %d, want 503", rec.Code)
	}
	close(b.release)
	wg.Wait()
	if len(errs) != 0 {
		t.Errorf("errors: %v", errs)
	}
}
