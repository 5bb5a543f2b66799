package health

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseNotify(f *testing.F) {
	for _, s := range []string{"READY=1", "READY=1\nSTATUS=ok\n", "STATUS=a=b", "READY", "=", "\n\n", "READY=1\x00", "STATUS=\xff",
		"MAINPID=4242", "MAINPID=1", "MAINPID=99999999999999999999", "STOPPING=1", "RELOADING=1\nMONOTONIC_USEC=1234", "MONOTONIC_USEC=-1"} {
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
		if ready != hasLine(b, "READY=1") {
			t.Fatalf("ready=%v for %q", ready, b)
		}
		m, _ := ParseNotifyMessage(b)
		if m.MainPID != 0 && (m.MainPID <= 1 || m.MainPID > maxPid || !hasValue(b, "MAINPID=", m.MainPID)) {
			t.Fatalf("MAINPID %d from %q", m.MainPID, b)
		}
		if m.Stopping != hasLine(b, "STOPPING=1") || m.Reloading != hasLine(b, "RELOADING=1") {
			t.Fatalf("stopping=%v reloading=%v for %q", m.Stopping, m.Reloading, b)
		}
		if m.MonotonicUsec != 0 && !bytes.Contains(b, []byte("MONOTONIC_USEC=")) {
			t.Fatalf("MONOTONIC_USEC %d from %q", m.MonotonicUsec, b)
		}
		if strings.Contains(status, "\n") || !bytes.Contains(b, []byte("STATUS="+status)) && status != "" {
			t.Fatalf("status %q not a line of %q", status, b)
		}
	})
}

// hasLine reports whether line is one of the lines of b.
func hasLine(b []byte, line string) bool {
	return bytes.Contains(append(append([]byte("\n"), b...), '\n'), []byte("\n"+line+"\n"))
}

// hasValue reports whether a line of b is key followed by a number n.
func hasValue(b []byte, key string, n int) bool {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			if x, err := strconv.Atoi(string(v)); err == nil && x == n {
				return true
			}
		}
	}
	return false
}
