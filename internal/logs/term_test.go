package logs

import (
	"bytes"
	"testing"
)

func TestTermText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello\r\nworld\r\n", "hello\nworld\n"},
		{"\x1b[1;31mred\x1b[0m plain\n", "red plain\n"},
		{"\x1b]0;title\x07after\n", "after\n"},
		{"\x1b]2;title\x1b\\after\n", "after\n"},
		{"\x1bPdcs data\x1b\\x\n", "x\n"},
		{"\x1b(Bascii\n", "ascii\n"},
		{"\x1b7save\x1b8\n", "save\n"},
		{"50%\r100%\n", "50%100%\n"},
		{"tab\there\b\x7f\n", "tab\there\n"},
		{"\x1b[?1049h\x1b[H\x1b[2J~\n", "~\n"},
		{"ünïcode ✓\n", "ünïcode ✓\n"},
	} {
		var tt TermText
		if got := string(tt.Filter(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("Filter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzTermText: no ESC or CR ever reaches the log, and a stream cut at
// any point gives the same text as in one piece.
func FuzzTermText(f *testing.F) {
	for _, s := range []string{"a\r\nb", "\x1b[1;2H", "\x1b]0;t\x07", "\x1bP\x1b\x1b\\", "\x1b(0", "\x1b\x1b[m"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		var whole TermText
		want := whole.Filter(nil, in)
		if bytes.ContainsAny(want, "\x1b\r") {
			t.Fatalf("Filter(%q) = %q keeps ESC or CR", in, want)
		}
		at := int(cut) % (len(in) + 1)
		var split TermText
		got := split.Filter(split.Filter(nil, in[:at]), in[at:])
		if !bytes.Equal(got, want) {
			t.Fatalf("split at %d: %q, whole: %q", at, got, want)
		}
	})
}
