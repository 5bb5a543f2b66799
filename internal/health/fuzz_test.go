package health

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseNotify(f *testing.F) {
	for _, s := range []string{"READY=1", "READY=1\nSTATUS=ok\n", "STATUS=a=b", "READY", "=", "\n\n", "READY=1\x00", "STATUS=\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ready, status, ok := ParseNotify(b)
		if !ok {
			if ready || status != "" {
				t.Fatalf("not ok but ready=%v status=%q", ready, status)
			}
			return
		}
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			t.Fatalf("accepted invalid input %q", b)
		}
		if ready != bytes.Contains(append(append([]byte("\n"), b...), '\n'), []byte("\nREADY=1\n")) {
			t.Fatalf("ready=%v for %q", ready, b)
		}
		if strings.Contains(status, "\n") || !bytes.Contains(b, []byte("STATUS="+status)) && status != "" {
			t.Fatalf("status %q not a line of %q", status, b)
		}
	})
}
