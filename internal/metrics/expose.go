package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Metric types, as the TYPE line spells them.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Histogram = "histogram"
)

// Writer accumulates one exposition. A family is opened with Family and its
// samples follow with Sample; the text format needs every sample of a family
// in one block, so a family opened twice is refused (its second block is
// dropped and reported in Errs). A sample that cannot be written (a label
// value that is not UTF-8) is dropped alone: one bad series must not hide
// the others from a scrape.
type Writer struct {
	buf    []byte
	family string
	typ    string
	seen   map[string]bool
	skip   bool
	errs   []error
}

// Family starts the family name with its type and help text.
func (w *Writer) Family(name, typ, help string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.family, w.typ, w.skip = name, typ, false
	if !validName(name) {
		w.skip = true
		w.errs = append(w.errs, fmt.Errorf("metric family %q: not a valid metric name", name))
		return
	}
	if w.seen[name] {
		w.skip = true
		w.errs = append(w.errs, fmt.Errorf("metric family %s: written twice; the second block is dropped", name))
		return
	}
	w.seen[name] = true
	w.buf = append(w.buf, "# HELP "...)
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, ' ')
	w.buf = appendEscaped(w.buf, help, false)
	w.buf = append(w.buf, "\n# TYPE "...)
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, typ...)
	w.buf = append(w.buf, '\n')
}

// Sample writes one sample of the open family: the family's name plus
// suffix ("" or, for a histogram, "_bucket", "_sum", "_count"), labels as
// name, value pairs, and the value.
func (w *Writer) Sample(suffix string, v float64, labels ...string) {
	if w.family == "" {
		w.errs = append(w.errs, errors.New("metric sample written before its family"))
		return
	}
	if w.skip {
		return
	}
	if len(labels)%2 != 0 {
		w.errs = append(w.errs, fmt.Errorf("metric %s: odd label list %q", w.family, labels))
		return
	}
	for i := 1; i < len(labels); i += 2 {
		if !utf8.ValidString(labels[i]) {
			w.errs = append(w.errs, fmt.Errorf("metric %s: label %s=%q is not valid UTF-8; series dropped", w.family, labels[i-1], labels[i]))
			return
		}
	}
	w.buf = append(w.buf, w.family...)
	w.buf = append(w.buf, suffix...)
	if len(labels) > 0 {
		w.buf = append(w.buf, '{')
		for i := 0; i < len(labels); i += 2 {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, labels[i]...)
			w.buf = append(w.buf, `="`...)
			w.buf = appendEscaped(w.buf, labels[i+1], true)
			w.buf = append(w.buf, '"')
		}
		w.buf = append(w.buf, '}')
	}
	w.buf = append(w.buf, ' ')
	w.buf = AppendFloat(w.buf, v)
	w.buf = append(w.buf, '\n')
}

// Grow makes room for n more bytes, so a scrape the size of the last one
// is written without copying as it grows.
func (w *Writer) Grow(n int) { w.buf = slices.Grow(w.buf, n) }

// Bytes is the exposition written so far.
func (w *Writer) Bytes() []byte { return w.buf }

// Errs lists what was dropped and why.
func (w *Writer) Errs() []error { return w.errs }

// AppendFloat formats a sample value or a bucket bound as the text format
// reads it: the shortest exact decimal, and +Inf, -Inf, NaN.
func AppendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendEscaped escapes a HELP text (backslash and newline) or a label value
// (also the double quote).
func appendEscaped(b []byte, s string, quote bool) []byte {
	if !strings.ContainsAny(s, "\\\n\"") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// validName reports whether s is a metric name the text format accepts
// unquoted: [a-zA-Z_:][a-zA-Z0-9_:]*.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
