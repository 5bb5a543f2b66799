package logs

import (
	"bytes"
	"log/slog"
)

// newHandler returns the slog.Handler behind Logger: slog's own text or JSON
// handler, minus its time (the sink stamps records itself), writing each
// record into the sink as one line. Both handlers emit a record with a single
// Write call, and quote or escape newlines, so one record is one line.
//
// In JSON a record already has "process":"podvisor", so an attribute named
// process (the process a message is about) becomes "subject": a duplicate
// key would make most parsers, which keep the last value, attribute
// podvisor's line to that child (docs/reliability.md, E9).
func (s *Sink) newHandler() slog.Handler {
	options := func(json bool) *slog.HandlerOptions {
		return &slog.HandlerOptions{
			Level: s.opts.Level,
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				if len(groups) == 0 && a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				if len(groups) == 0 && json && a.Key == "process" {
					a.Key = "subject"
				}
				return a
			},
		}
	}
	w := ownWriter{s}
	// Both, so that a reload can switch the format (live.go).
	return &switchHandler{s: s, text: slog.NewTextHandler(w, options(false)), json: slog.NewJSONHandler(w, options(true))}
}

// ownWriter queues podvisor's own records for the sink without blocking.
type ownWriter struct{ s *Sink }

func (o ownWriter) Write(p []byte) (int, error) {
	s := o.s
	if s.stopped.Load() {
		s.ownDropped.Add(1)
		return len(p), nil
	}
	var stamp []byte
	if s.stamps.Load() {
		stamp = s.opts.Now().AppendFormat(make([]byte, 0, 40), timeFormat)
	}
	b := s.getBatch()
	b.data = s.format(b.data, stamp, s.own, bytes.TrimSuffix(p, []byte("\n")), false)
	b.lines = 1
	b.countN(s.own, 1)
	s.inflight.Add(1)
	b.seq = s.seq.Add(1)
	select {
	case s.ownQueue <- b:
	default:
		// The sink is stuck behind a slow writer; the caller (often the
		// supervisor's loop) must not wait for it (docs/reliability.md, D9).
		s.inflight.Add(-1)
		s.ownDropped.Add(1)
		s.own.stats.dropped[reasonIndex(ReasonBlocked)].Add(1)
		s.release(b)
	}
	return len(p), nil
}
