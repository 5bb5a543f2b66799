package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/podvisor/podvisor/internal/testproc"
)

var fixedNow = func() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC) }

// collect runs input through a sink attached as name/stream and returns the
// output once the reader hit EOF.
func collect(t *testing.T, opts Options, name, stream string, in []byte) string {
	t.Helper()
	var out bytes.Buffer
	s := NewSink(&out, opts)
	<-s.Attach(name, stream, iotest.HalfReader(bytes.NewReader(in)), nil)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestTextFormat(t *testing.T) {
	got := collect(t, Options{Width: 6}, "web", "stdout", []byte("hello\n\nworld\r\n\x00bin\nlast"))
	want := "web    | hello\nweb    | \nweb    | world\r\nweb    | \x00bin\nweb    | last\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	got = collect(t, Options{Width: 2, Timestamps: true, Now: fixedNow}, "longname", "stderr", []byte("x\n"))
	if want := "2025-03-04T05:06:07.890Z longname | x\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestJSONFormat(t *testing.T) {
	got := collect(t, Options{Format: "json", Now: fixedNow}, "db", "stderr", []byte("ready\n"))
	want := `{"time":"2025-03-04T05:06:07.890Z","process":"db","stream":"stderr","line":"ready"}` + "\n"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// E9, B10: whatever a child prints, each output line is one JSON object whose
// only child-controlled field is "line", and it decodes to the bytes printed
// (invalid UTF-8 replaced per byte, as encoding/json does).
func TestJSONEscapesEverything(t *testing.T) {
	var inputs [][]byte
	var all []byte
	for c := range 256 {
		if c != '\n' {
			all = append(all, byte(c))
		}
	}
	inputs = append(inputs, all,
		[]byte(`{"time":"x","process":"podvisor","level":"ERROR","msg":"fake"}`),
		[]byte("\x1b[31mred\x1b[0m\rcr\ttab\"quote\\"),
		[]byte("ok ünïcödé 日本 \u2028\u2029 end"),
		[]byte("\xff\xfe\xc3\x28\xe2\x82 truncated \xf0\x9f\x98"),
	)
	in := bytes.Join(inputs, []byte("\n"))
	got := collect(t, Options{Format: "json", Now: fixedNow}, "evil", "stdout", in)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%d output lines for %d inputs:\n%s", len(lines), len(inputs), got)
	}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i, err, l)
		}
		if len(rec) != 4 || rec["process"] != "evil" || rec["stream"] != "stdout" {
			t.Errorf("line %d: fields %v", i, rec)
		}
		want, _ := json.Marshal(string(inputs[i]))
		var wantStr string
		_ = json.Unmarshal(want, &wantStr)
		if rec["line"] != wantStr {
			t.Errorf("line %d: %q, want %q", i, rec["line"], wantStr)
		}
		if !utf8.ValidString(l) || strings.ContainsAny(l, "\x00\x1b\r\u2028") {
			t.Errorf("line %d has raw control characters: %q", i, l)
		}
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x1f\x7f", "é\xffé", "\u2028", "<&>"} {
		var got map[string]string
		doc := append(appendJSONString([]byte(`{"k":"`), []byte(s)), `"}`...)
		if err := json.Unmarshal(doc, &got); err != nil {
			t.Fatalf("%q: %v (%s)", s, err, doc)
		}
		var want string
		b, _ := json.Marshal(s)
		_ = json.Unmarshal(b, &want)
		if got["k"] != want {
			t.Errorf("%q: decodes to %q, want %q", s, got["k"], want)
		}
	}
}

func TestOwnLogger(t *testing.T) {
	var out bytes.Buffer
	s := NewSink(&out, Options{Width: 8})
	s.Logger().Info("spawned", "process", "web", "pid", 42)
	s.Logger().Debug("hidden")
	s.Logger().Warn("multi\nline")
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "podvisor | level=INFO msg=spawned process=web pid=42\n" +
		"podvisor | level=WARN msg=\"multi\\nline\"\n"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}

	out.Reset()
	s = NewSink(&out, Options{Format: "json", Now: fixedNow})
	s.Logger().With("component", "reaper").Error("boom", "err", "x\"y")
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want = `{"time":"2025-03-04T05:06:07.890Z","process":"podvisor","level":"ERROR","msg":"boom","component":"reaper","err":"x\"y"}` + "\n"
	if out.String() != want {
		t.Fatalf("got %s\nwant %s", out.String(), want)
	}
}

func TestSplitting(t *testing.T) {
	long := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	tests := []struct {
		name   string
		in     []byte
		pieces []int // lengths of the delivered lines
		splits uint64
	}{
		{"200 KB line", append(long(200<<10, 'a'), '\n'), []int{MaxLine, MaxLine, MaxLine, 200<<10 - 3*MaxLine}, 3},
		{"exactly MaxLine", append(long(MaxLine, 'b'), '\n'), []int{MaxLine}, 0},
		{"MaxLine+1", append(long(MaxLine+1, 'c'), '\n'), []int{MaxLine, 1}, 1},
		{"long without newline", long(2*MaxLine+5, 'd'), []int{MaxLine, MaxLine, 5}, 2},
		{"short after long", append(append(long(MaxLine+10, 'e'), '\n'), "ready\n"...), []int{MaxLine, 10, 5}, 1},
	}
	// Small reads (HalfReader) spread lines over reads. With full reads
	// (bytes.Reader) the fill line fills the first read, which grows the read
	// buffer past MaxLine, so that long lines then arrive within one read.
	readers := map[string]func([]byte) io.Reader{
		"half reads": func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"full reads": func(b []byte) io.Reader { return bytes.NewReader(b) },
	}
	for _, tt := range tests {
		for rname, reader := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				splitCase(t, reader(append([]byte(fill+"\n"), tt.in...)), tt.in, tt.pieces, tt.splits)
			})
		}
	}
}

// fill is a line that exactly fills the first read.
var fill = strings.Repeat("f", readSize-1)

func splitCase(t *testing.T, r io.Reader, in []byte, pieces []int, splits uint64) {
	var out bytes.Buffer
	s := NewSink(&out, Options{Format: "json"})
	var tapped []int
	<-s.Attach("p", "stdout", r, func(l []byte) {
		if string(l) != fill {
			tapped = append(tapped, len(l))
		}
	})
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []int
	var rebuilt []byte
	for l := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var rec struct {
			Line  string
			Split bool
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Line == fill {
			continue
		}
		got = append(got, len(rec.Line))
		rebuilt = append(rebuilt, rec.Line...)
		if !rec.Split {
			rebuilt = append(rebuilt, '\n')
		}
	}
	if !slices.Equal(got, pieces) || !slices.Equal(tapped, pieces) {
		t.Errorf("pieces %v, tapped %v, want %v", got, tapped, pieces)
	}
	if s.SplitLines() != splits {
		t.Errorf("SplitLines() = %d, want %d", s.SplitLines(), splits)
	}
	if want := string(bytes.TrimSuffix(in, []byte("\n"))) + "\n"; string(rebuilt) != want {
		t.Errorf("joining the pieces does not give the input back")
	}
}

// A long line dribbled out a byte at a time (a progress bar without
// newlines, say) costs a copy of each byte, not of the whole unfinished
// line at every read: 1 MB in reads of one byte, through take (the pump's
// path) and feed (a reader goroutine's), takes well under a second where
// copying the line each time would take many.
func TestDribbledLineIsLinear(t *testing.T) {
	const size = 1 << 20
	for _, how := range []string{"take", "feed"} {
		t.Run(how, func(t *testing.T) {
			var out bytes.Buffer
			s := NewSink(&out, Options{Width: 1})
			sp := newSplitter(s.newSource("p", "stdout", 0), "stdout", NewTail(10, DefaultTailBytes), nil)
			b := s.getBatch()
			buf := make([]byte, MaxLine+1)
			start := time.Now()
			for i := range size + 1 {
				c := byte('x')
				if i == size {
					c = '\n'
				}
				if how == "take" {
					buf[MaxLine] = c
					sp.take(s, b, buf, MaxLine, 1, nil, time.Time{})
				} else {
					sp.feed(s, b, []byte{c}, nil, time.Time{})
				}
			}
			if d := time.Since(start); d > 5*time.Second*testproc.Slowdown() {
				t.Errorf("%d one-byte reads took %v", size+1, d)
			}
			if want := uint64(size / MaxLine); b.lines != want || len(b.data) != size+int(want)*len("p | \n") {
				t.Errorf("%d lines, %d bytes; want %d pieces of the line", b.lines, len(b.data), want)
			}
			if lines, next := sp.tail.Last(-1); next != size/MaxLine+1 || len(lines) != 1 || len(lines[0].Line) != MaxLine {
				t.Errorf("tail: %d lines, next %d; want the last piece, next %d", len(lines), next, size/MaxLine+1)
			}
			s.release(b)
			_ = s.Close(context.Background())
		})
	}
}
