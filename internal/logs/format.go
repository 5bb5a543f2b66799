package logs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// timeFormat is RFC 3339 with milliseconds, fixed width.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// source is one output stream of one process, with its formatting prefixes
// computed once.
type source struct {
	text  []byte // "name   | "
	json  []byte // `","process":"name","stream":"stdout","incarnation":N,"line":"` (own: `","process":"podvisor",`)
	stats *procStats
}

// newSource makes a source; incarnation 0 (unknown) is left out of JSON.
func (s *Sink) newSource(name, stream string, incarnation uint64) *source {
	src := &source{text: fmt.Appendf(nil, "%-*s | ", s.opts.Width, name), stats: s.statsFor(name)}
	src.json = append(src.json, `","process":"`...)
	src.json = appendJSONString(src.json, []byte(name))
	if stream == "" { // podvisor's own: slog's fields follow
		src.json = append(src.json, `",`...)
		return src
	}
	src.json = append(src.json, `","stream":"`...)
	src.json = appendJSONString(src.json, []byte(stream))
	if incarnation > 0 {
		src.json = fmt.Appendf(src.json, `","incarnation":%d,"line":"`, incarnation)
	} else {
		src.json = append(src.json, `","line":"`...)
	}
	return src
}

// format appends one formatted line. stamp is the formatted read time, or nil
// when lines carry none.
func (s *Sink) format(dst, stamp []byte, src *source, line []byte, split bool) []byte {
	switch {
	case src == s.own && s.json.Load():
		return appendOwnJSON(dst, stamp, src, line)
	case s.json.Load():
		return appendJSON(dst, stamp, src, line, split)
	default:
		return appendText(dst, stamp, src, line)
	}
}

// formattedSize estimates the formatted size of n bytes of typical output
// (lines of some dozens of bytes).
func (s *Sink) formattedSize(n int) int {
	if s.json.Load() {
		return 2*n + 256
	}
	return n + n/4 + 256
}

// appendText formats `[time ]name | line` plus a newline. The line is passed
// through as is: the prefix frames it.
func appendText(dst, stamp []byte, src *source, line []byte) []byte {
	if stamp != nil {
		dst = append(dst, stamp...)
		dst = append(dst, ' ')
	}
	dst = append(dst, src.text...)
	dst = append(dst, line...)
	return append(dst, '\n')
}

// appendJSON formats one child line as a JSON object. The child's bytes only
// ever appear inside "line", escaped, so a child cannot forge other fields or
// podvisor's own records (E9).
func appendJSON(dst, stamp []byte, src *source, line []byte, split bool) []byte {
	dst = append(dst, `{"time":"`...)
	dst = append(dst, stamp...)
	dst = append(dst, src.json...)
	dst = appendJSONString(dst, line)
	if split {
		return append(dst, "\",\"split\":true}\n"...)
	}
	return append(dst, "\"}\n"...)
}

// appendTextLines formats every line of lines, whole lines each ending in
// '\n' (see splitter.lines), as head (`[time ]name | `) and the line: the
// text format of a whole read at once, one scan for its line ends and one
// copy of each line with its newline. It returns how many lines there were.
func appendTextLines(dst, head, lines []byte) ([]byte, int) {
	n := 0
	for len(lines) > 0 {
		i := bytes.IndexByte(lines, '\n') + 1
		dst = append(dst, head...)
		dst = append(dst, lines[:i]...)
		lines = lines[i:]
		n++
	}
	return dst, n
}

// appendJSONLines formats every line of lines (as appendTextLines) as a
// JSON object: head is `{"time":"…","process":…,"line":"` (jsonHead), then
// the escaped line (appendJSONLine). It returns how many lines there were.
func appendJSONLines(dst, head, lines []byte) ([]byte, int) {
	n := 0
	for len(lines) > 0 {
		dst = append(dst, head...)
		var i int
		dst, i = appendJSONLine(dst, lines)
		dst = append(dst, '"', '}', '\n')
		lines = lines[i+1:]
		n++
	}
	return dst, n
}

// appendJSONLine appends s up to its first '\n' (it has one) escaped as
// appendJSONString does, and returns the newline's index. The bytes that
// need no escaping are found many at a time (plainPrefix, which stops at
// the newline, a control character) and copied at once.
func appendJSONLine(dst, s []byte) ([]byte, int) {
	i := 0
	for {
		k := i + plainPrefix(s[i:])
		dst = append(dst, s[i:k]...)
		i = k
		switch c := s[i]; {
		case c == '\n':
			return dst, i
		case c < utf8.RuneSelf:
			dst = appendEscaped(dst, c)
			i++
		default:
			var size int
			dst, size = appendRune(dst, s[i:])
			i += size
		}
	}
}

// appendRune appends the UTF-8 sequence at the start of s (its first byte
// is not ASCII) as it is, or escaped (U+2028, U+2029), or U+FFFD for a byte
// that is not valid UTF-8; it returns the bytes it took.
func appendRune(dst, s []byte) ([]byte, int) {
	r, size := utf8.DecodeRune(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return append(dst, `\ufffd`...), 1
	case r == '\u2028' || r == '\u2029':
		return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf]), size
	}
	return append(dst, s[:size]...), size
}

// appendEscaped appends the escape of c, an ASCII byte that needs one.
func appendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// jsonHead appends what every JSON line of src read at stamp begins with,
// up to the line's text: appendJSON's output before the line.
func jsonHead(dst, stamp []byte, src *source) []byte {
	dst = append(dst, `{"time":"`...)
	dst = append(dst, stamp...)
	return append(dst, src.json...)
}

// textHead appends what every text line of src begins with: the stamp and
// a space when lines carry a time, and the name and bar.
func textHead(dst, stamp []byte, src *source) []byte {
	if stamp != nil {
		dst = append(dst, stamp...)
		dst = append(dst, ' ')
	}
	return append(dst, src.text...)
}

// appendOwnJSON merges one record of slog's JSON handler (`{"level":...}`,
// its time removed) into podvisor's record shape:
// {"time":"…","process":"podvisor","level":"INFO","msg":"…",…}.
func appendOwnJSON(dst, stamp []byte, own *source, payload []byte) []byte {
	if len(payload) < 2 || payload[0] != '{' || payload[1] == '}' {
		return appendJSON(dst, stamp, &source{json: []byte(`","process":"podvisor","stream":"log","line":"`)}, payload, false)
	}
	dst = append(dst, `{"time":"`...)
	dst = append(dst, stamp...)
	dst = append(dst, own.json...)
	dst = append(dst, payload[1:]...)
	return append(dst, '\n')
}

const hexDigits = "0123456789abcdef"

// jsonPlain marks the ASCII bytes that need no escaping in a JSON string.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s escaped as the inside of a JSON string. Control
// characters (including DEL) are escaped, and each byte that is not part of
// valid UTF-8 becomes U+FFFD (as encoding/json does), so the result always
// parses; U+2028 and U+2029 are escaped for JavaScript consumers.
func appendJSONString(dst, s []byte) []byte {
	for len(s) > 0 {
		k := plainPrefix(s)
		dst = append(dst, s[:k]...)
		if s = s[k:]; len(s) == 0 {
			break
		}
		if c := s[0]; c < utf8.RuneSelf {
			dst = appendEscaped(dst, c)
			s = s[1:]
			continue
		}
		var size int
		dst, size = appendRune(dst, s)
		s = s[size:]
	}
	return dst
}

// plainPrefix returns how many leading bytes of s need no escaping (nor a
// look at their UTF-8): printable ASCII but '"' and '\\'. Most of them are
// taken by plainBlocks (SSE2 on amd64, eight bytes at a time elsewhere),
// the last few one by one.
func plainPrefix(s []byte) int {
	i := plainBlocks(s)
	for i < len(s) && s[i] < utf8.RuneSelf && jsonPlain[s[i]] {
		i++
	}
	return i
}

// plainWords is plainBlocks in Go, eight bytes at a time (special8): the
// index of the first byte that needs a look, or where fewer than eight
// bytes are left. It serves architectures without their own plainBlocks,
// and the tests of those.
func plainWords(s []byte) int {
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		if m := special8(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8 // exact for the first such byte
		}
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 is non-zero iff some of the 8 bytes in x needs escaping (or a
// look at its UTF-8): a control character, '"', '\\', DEL or a byte >= 0x80.
// The common case is zero, so that the word is passed at once. The
// lowest marked byte (bit 7 of each byte) is exactly the first that needs
// a look: a borrow or a carry can mark bytes only above one that does.
func special8(x uint64) uint64 {
	control := (x - 0x20*ones) & ^x     // a byte < 0x20 (its high bit)
	high := (x + ones) | x              // a byte >= 0x7f (0x7f + 1 or the high bit)
	quote := hasZero(x ^ ('"' * ones))  // '"'
	slash := hasZero(x ^ ('\\' * ones)) // '\\'
	return (control|high)&highs | quote | slash
}

// hasZero is non-zero iff some byte of v is zero.
func hasZero(v uint64) uint64 { return (v - ones) & ^v & highs }
