package main

import (
	"bytes"
	"testing"
)

func TestParseDetachKeys(t *testing.T) {
	for in, want := range map[string]string{"ctrl-p,ctrl-q": "\x10\x11", "ctrl-@,x": "\x00x", "CTRL-A": "\x01", "ctrl-\\": "\x1c", "q": "q"} {
		got, err := parseDetachKeys(in)
		if err != nil || string(got) != want {
			t.Errorf("parseDetachKeys(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ctrl-", "ctrl-1", "ab", "ctrl-p,"} {
		if _, err := parseDetachKeys(in); err == nil {
			t.Errorf("parseDetachKeys(%q) accepted", in)
		}
	}
}

func TestDetacher(t *testing.T) {
	for _, tc := range []struct {
		in     []string
		out    string
		detach bool
	}{
		{[]string{"ab\x10\x11cd"}, "ab", true},
		{[]string{"ab\x10", "\x11"}, "ab", true},
		{[]string{"a\x10b"}, "a\x10b", false},
		{[]string{"\x10\x10\x11"}, "\x10", true},
		{[]string{"\x10"}, "", false}, // held back until the next key
	} {
		d := detacher{keys: []byte("\x10\x11")}
		var out []byte
		detach := false
		for _, s := range tc.in {
			o, det := d.feed([]byte(s))
			out, detach = append(out, o...), det
		}
		if string(out) != tc.out || detach != tc.detach {
			t.Errorf("%q: out %q detach %v; want %q %v", tc.in, out, detach, tc.out, tc.detach)
		}
	}
}

// FuzzParseDetachKeys: accepted keys are never empty, and the detacher
// they make detaches on exactly them.
func FuzzParseDetachKeys(f *testing.F) {
	for _, s := range []string{"ctrl-p,ctrl-q", "x", "ctrl-[,a,ctrl-_", ",,", "ctrl-\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := parseDetachKeys(s)
		if err != nil {
			return
		}
		if len(keys) == 0 {
			t.Fatalf("%q: no keys", s)
		}
		d := detacher{keys: keys}
		out, detach := d.feed(append([]byte("z"), keys...))
		if !detach || !bytes.HasPrefix([]byte("z"), out) {
			t.Fatalf("%q: keys %q: out %q detach %v", s, keys, out, detach)
		}
	})
}
