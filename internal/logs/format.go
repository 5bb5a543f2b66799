package logs

import (
	"encoding/binary"
	"fmt"
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
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether the 8 bytes in x all need no escaping (the common
// case), so that appendJSONString can skip them at once.
func plain8(x uint64) bool {
	control := (x - 0x20*ones) & ^x & highs // some byte < 0x20 (exact as a yes/no)
	return (control | x&highs | hasZero(x^('"'*ones)) | hasZero(x^('\\'*ones)) | hasZero(x^(0x7f*ones))) == 0
}

// hasZero is non-zero iff some byte of v is zero.
func hasZero(v uint64) uint64 { return (v - ones) & ^v & highs }
