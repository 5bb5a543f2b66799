package tui

import (
	"context"
	"testing"
)

// TestWidths: columns are counted per grapheme cluster, escape sequences
// taking none: East Asian wide characters and emoji take two, combining
// marks and zero-width joiners none.
func TestWidths(t *testing.T) {
	for _, c := range []struct {
		s string
		w int
	}{
		{"abc", 3},
		{"数据库", 6},
		{"\x1b[31m数据库\x1b[0m ok", 9},
		{"e\u0301te\u0301", 3},   // combining acute accents
		{"🚀 go", 5},              // emoji
		{"👨\u200d👩\u200d👧 x", 4}, // one family cluster
		{"한국어", 6},
	} {
		if got := width(c.s); got != c.w {
			t.Errorf("width(%q) = %d, want %d", c.s, got, c.w)
		}
	}
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"数据库服务", 6, "数据… "}, // a wide character does not fit in the one column left
		{"数据库", 6, "数据库"},
		{"é1234", 3, "é1…"},
		{"ab", 4, "ab  "},
	} {
		if got := pad(c.s, c.w); got != c.want || width(got) != c.w {
			t.Errorf("pad(%q, %d) = %q (%d columns), want %q", c.s, c.w, got, width(got), c.want)
		}
	}
	m := New(context.Background(), &fakeSource{}, true)
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		// A cut inside a colour closes it.
		{"\x1b[31m数据库服务\x1b[0m", 5, "\x1b[31m数据\x1b[0m"},
		{"\x1b[31m数据库服务", 5, "\x1b[31m数据\x1b[0m"},
		{"ok \x1b[32m数据\x1b[0m", 20, "ok \x1b[32m数据\x1b[0m"},
		{"数据库", 3, "数"},
	} {
		if got := m.clip(c.s, c.w); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
}
