package health

import (
	"bytes"
	"regexp"
	"sync/atomic"
)

// LogMatcher turns the first output line matching a regexp into a readiness
// signal. The log readers of a process's stdout and stderr both Feed it whole
// lines; a line that internal/logs split because it was too long arrives as
// separate pieces, and a match never spans two pieces.
//
// Make a new LogMatcher for each start of the process: it fires only once.
type LogMatcher struct {
	re      *regexp.Regexp
	matched atomic.Bool
	onMatch func(line string)
}

// NewLogMatcher returns a matcher for re that calls onMatch, once, with the
// first matching line. onMatch runs on the goroutine that fed the line and
// should only hand off.
func NewLogMatcher(re *regexp.Regexp, onMatch func(line string)) *LogMatcher {
	return &LogMatcher{re: re, onMatch: onMatch}
}

// Feed offers one output line, with or without its line ending. It is safe
// for concurrent use; once a line has matched, Feed costs one atomic load.
func (m *LogMatcher) Feed(line []byte) {
	if m.matched.Load() {
		return
	}
	line = bytes.TrimRight(line, "\r\n")
	if !m.re.Match(line) {
		return
	}
	// Both streams may match at the same time; only the first caller wins.
	if m.matched.CompareAndSwap(false, true) {
		m.onMatch(string(line))
	}
}

// Matched reports whether a line has matched.
func (m *LogMatcher) Matched() bool {
	return m.matched.Load()
}
