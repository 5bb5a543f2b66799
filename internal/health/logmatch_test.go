package health

import (
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
)

func TestLogMatcher(t *testing.T) {
	tests := []struct {
		name  string
		re    string
		lines []string
		want  string // the line reported, "" for no match
	}{
		{"whole line", `^ready$`, []string{"starting", "ready"}, "ready"},
		{"line ending trimmed", `^ready$`, []string{"ready\r\n"}, "ready"},
		{"substring", `listening on :\d+`, []string{"garbage \x00\xff", "http: listening on :8080 (tls off)"}, "http: listening on :8080 (tls off)"},
		{"split pieces never match across", `^ready$`, []string{"rea", "dy"}, ""},
		{"first match wins", `ok \d`, []string{"ok 1", "ok 2"}, "ok 1"},
		{"no match", `ready`, []string{"not yet", "still not"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			m := NewLogMatcher(regexp.MustCompile(tt.re), func(line string) { got = append(got, line) })
			for _, l := range tt.lines {
				m.Feed([]byte(l))
			}
			want := []string{}
			if tt.want != "" {
				want = []string{tt.want}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || m.Matched() != (tt.want != "") {
				t.Errorf("matched %q (Matched()=%v), want %q", got, m.Matched(), want)
			}
		})
	}
}

// stdout and stderr readers feed concurrently; the callback fires once.
func TestLogMatcherConcurrent(t *testing.T) {
	var calls atomic.Int32
	m := NewLogMatcher(regexp.MustCompile(`ready`), func(string) { calls.Add(1) })
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				m.Feed(fmt.Appendf(nil, "stream %d line %d", g, i))
				if i == 500 {
					m.Feed([]byte("ready"))
				}
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("callback ran %d times, want 1", n)
	}
}

// After the match, Feed does no matching and allocates nothing.
func TestLogMatcherAfterMatchIsFree(t *testing.T) {
	m := NewLogMatcher(regexp.MustCompile(`ready`), func(string) {})
	m.Feed([]byte("ready"))
	line := []byte("ready again, and a long line that would cost something to match")
	if n := testing.AllocsPerRun(100, func() { m.Feed(line) }); n != 0 {
		t.Errorf("Feed after the match allocates %v times", n)
	}
}
