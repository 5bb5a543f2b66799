package logs

import (
	"context"
	"log/slog"
)

// SetFormat switches the output format and timestamps while the sink runs
// (a reload of the log section). Lines already formatted keep their form;
// every line read afterwards, and every message of podvisor's own, takes the
// new one.
func (s *Sink) SetFormat(format string, timestamps bool) {
	s.json.Store(format == "json")
	s.stamps.Store(format == "json" || timestamps)
}

// switchHandler is podvisor's own log handler: the text or the JSON one,
// whichever the sink's format is at the time of each record.
type switchHandler struct {
	s          *Sink
	text, json slog.Handler
}

func (h *switchHandler) pick() slog.Handler {
	if h.s.json.Load() {
		return h.json
	}
	return h.text
}

func (h *switchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.pick().Enabled(ctx, l)
}

func (h *switchHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.pick().Handle(ctx, r)
}

func (h *switchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &switchHandler{s: h.s, text: h.text.WithAttrs(as), json: h.json.WithAttrs(as)}
}

func (h *switchHandler) WithGroup(name string) slog.Handler {
	return &switchHandler{s: h.s, text: h.text.WithGroup(name), json: h.json.WithGroup(name)}
}
