package metrics

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// ContentType is the text format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Collector writes families into a scrape.
type Collector interface {
	Collect(w *Writer)
}

// CollectorFunc is a function as a Collector.
type CollectorFunc func(w *Writer)

// Collect calls f.
func (f CollectorFunc) Collect(w *Writer) { f(w) }

// Handler serves the collectors' exposition. At most maxInFlight scrapes
// are computed at once; the excess gets 503 at once rather than piling up
// goroutines and buffers. The body is gzipped when the scraper accepts it
// (Prometheus does). onErrs receives what a scrape dropped, if anything.
func Handler(collectors func() []Collector, maxInFlight int, onErrs func([]error)) http.Handler {
	sem := make(chan struct{}, maxInFlight)
	var last atomic.Int64 // the last exposition's size
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		default:
			http.Error(rw, "too many concurrent scrapes", http.StatusServiceUnavailable)
			return
		}
		var w Writer
		w.Grow(int(last.Load() + last.Load()/8))
		for _, c := range collectors() {
			c.Collect(&w)
		}
		last.Store(int64(len(w.Bytes())))
		if errs := w.Errs(); len(errs) > 0 && onErrs != nil {
			onErrs(errs)
		}
		h := rw.Header()
		h.Set("Content-Type", ContentType)
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
			zw, _ := gzip.NewWriterLevel(rw, gzip.BestSpeed)
			_, _ = zw.Write(w.Bytes())
			_ = zw.Close()
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(w.Bytes())))
		_, _ = rw.Write(w.Bytes())
	})
}

// acceptsGzip reads an Accept-Encoding header for gzip with a non-zero q.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		f, err := strconv.ParseFloat(q, 64)
		return err == nil && f > 0
	}
	return false
}
