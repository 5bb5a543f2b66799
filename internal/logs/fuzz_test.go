package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// chunkReader returns its data in reads of pseudo-random sizes (1..max),
// so that lines straddle reads in every possible way.
type chunkReader struct {
	data []byte
	seed uint32
	max  int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.seed = r.seed*1664525 + 1013904223 // an LCG: deterministic per input
	n := 1 + int(r.seed>>8)%r.max
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// wantPieces is the splitter's contract: every '\n'-terminated line, and a
// non-empty unterminated tail, delivered in order, each cut into pieces of
// at most MaxLine bytes where refCut says (a line of exactly k*MaxLine
// ASCII bytes gives k pieces, an empty line one empty piece).
func wantPieces(in []byte) [][]byte {
	var out [][]byte
	cut := func(line []byte) {
		for len(line) > MaxLine {
			n := refCut(line)
			out = append(out, line[:n])
			line = line[n:]
		}
		out = append(out, line)
	}
	for {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			break
		}
		cut(in[:i])
		in = in[i+1:]
	}
	if len(in) > 0 {
		cut(in)
	}
	return out
}

// refCut is where a line longer than MaxLine is cut, by another route than
// cutLen: decode the line from its start, and cut before the character
// that would cross MaxLine if it is a valid multi-byte one.
func refCut(line []byte) int {
	for i := 0; ; {
		r, size := utf8.DecodeRune(line[i:])
		if i+size > MaxLine {
			if r == utf8.RuneError && size == 1 {
				return MaxLine
			}
			return i
		}
		i += size
	}
}

// textOf is what the text format prints for pieces of process name
// (width 1, so the prefix is "name | ").
func textOf(name string, pieces [][]byte) []byte {
	var b []byte
	for _, p := range pieces {
		b = append(b, name+" | "...)
		b = append(b, p...)
		b = append(b, '\n')
	}
	return b
}

// FuzzSplit feeds two streams at once, read in random chunk sizes, through
// a sink, and checks the line splitter and the sink's ordering: each
// stream's lines come out whole, cut at MaxLine, in order, never mixed with
// the other stream's, and the tap sees the same pieces; in JSON every output
// line is one valid object.
func FuzzSplit(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), []byte("x\n\ny"), uint32(0), uint32(0), uint32(7), uint8(3))
	f.Add([]byte("no newline"), []byte(""), uint32(MaxLine), uint32(3), uint32(1), uint8(200))
	f.Add([]byte("a\nb"), []byte("\n\n\n"), uint32(MaxLine-1), uint32(1), uint32(99), uint8(0))
	f.Add([]byte("\xff\xfe\x00\x1b[31m\r\n"), []byte("z"), uint32(2*MaxLine+1), uint32(0), uint32(5), uint8(255))
	f.Add([]byte("€\n"), []byte("😀"), uint32(MaxLine-2), uint32(0), uint32(3), uint8(40)) // a character across the cut
	f.Fuzz(func(t *testing.T, a, b []byte, long, pos, seed uint32, maxRead uint8) {
		// Insert a long run into a, so that the cuts at MaxLine are reached
		// without huge corpus entries.
		if n := int(long % (3*MaxLine + 2)); n > 0 {
			p := 0
			if len(a) > 0 {
				p = int(pos % uint32(len(a)+1))
			}
			a = append(append(append([]byte{}, a[:p]...), bytes.Repeat([]byte{'y'}, n)...), a[p:]...)
		}
		for _, format := range []string{"text", "json"} {
			var out bytes.Buffer
			s := NewSink(&out, Options{Format: format, Width: 1})
			var tapA [][]byte
			da := s.Attach("a", "stdout", &chunkReader{data: a, seed: seed, max: 1 + int(maxRead)*300}, func(l []byte) {
				tapA = append(tapA, append([]byte{}, l...))
			})
			db := s.Attach("b", "stderr", &chunkReader{data: b, seed: ^seed, max: 1 + int(maxRead)}, nil)
			<-da
			<-db
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			pa, pb := wantPieces(a), wantPieces(b)
			if len(tapA) != len(pa) {
				t.Fatalf("tap saw %d pieces, want %d", len(tapA), len(pa))
			}
			for i := range pa {
				if !bytes.Equal(tapA[i], pa[i]) {
					t.Fatalf("tap piece %d: %q, want %q", i, tapA[i], pa[i])
				}
			}
			if format == "text" {
				var gotA, gotB []byte
				for line := range bytes.Lines(out.Bytes()) {
					switch {
					case bytes.HasPrefix(line, []byte("a | ")):
						gotA = append(gotA, line...)
					case bytes.HasPrefix(line, []byte("b | ")):
						gotB = append(gotB, line...)
					default:
						t.Fatalf("line of no stream: %q", line)
					}
				}
				if !bytes.Equal(gotA, textOf("a", pa)) {
					t.Fatalf("stream a came out as\n%q\nwant\n%q", gotA, textOf("a", pa))
				}
				if !bytes.Equal(gotB, textOf("b", pb)) {
					t.Fatalf("stream b came out as\n%q\nwant\n%q", gotB, textOf("b", pb))
				}
				continue
			}
			counts := map[string]int{}
			for line := range strings.Lines(out.String()) {
				var rec struct {
					Process, Stream, Line string
					Split                 bool
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("invalid JSON line %q: %v", line, err)
				}
				counts[rec.Process]++
			}
			if counts["a"] != len(pa) || counts["b"] != len(pb) || len(counts) > 2 {
				t.Fatalf("JSON lines per process %v, want a:%d b:%d", counts, len(pa), len(pb))
			}
		}
	})
}

// FuzzJSONLine checks the one-pass JSON escaper of the common path against
// appendJSONString and encoding/json: for any bytes up to a newline it
// appends what appendJSONString does, finds that newline whatever follows
// it, and the result decodes to what encoding/json makes of the bytes.
func FuzzJSONLine(f *testing.F) {
	f.Add([]byte("plain text of some length, more than sixteen bytes"), []byte("next"))
	f.Add([]byte("a\"b\\c\x00\x1f\x7f é\xff\u2028<&>\t\r"), []byte(""))
	f.Add([]byte("12345678"), []byte("\n\n"))
	f.Fuzz(func(t *testing.T, s, after []byte) {
		if i := bytes.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		want := appendJSONString([]byte("x"), s)
		in := append(append(append([]byte{}, s...), '\n'), after...)
		got, i := appendJSONLine([]byte("x"), in)
		if i != len(s) || !bytes.Equal(got, want) {
			t.Fatalf("appendJSONLine(%q) = %q, %d; want %q, %d", in, got, i, want, len(s))
		}
		var dec string
		if err := json.Unmarshal(append(append([]byte(`"`), want[1:]...), '"'), &dec); err != nil {
			t.Fatalf("%q escapes to %q: %v", s, want[1:], err)
		}
		var ref string
		b, _ := json.Marshal(string(s))
		_ = json.Unmarshal(b, &ref)
		if dec != ref {
			t.Fatalf("%q decodes to %q, encoding/json to %q", s, dec, ref)
		}
		// The block scans, the platform's and the Go one, against a
		// byte loop: each stops at the first byte that needs a look, or
		// short of the end by less than its block.
		firstSpecial := func(b []byte) int {
			i := 0
			for i < len(b) && b[i] < utf8.RuneSelf && jsonPlain[b[i]] {
				i++
			}
			return i
		}
		for off := range min(len(in), 17) {
			b, want := in[off:], firstSpecial(in[off:])
			if got := plainPrefix(b); got != want {
				t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
			}
			for _, scan := range []struct {
				name  string
				f     func([]byte) int
				block int
			}{{"plainBlocks", plainBlocks, 16}, {"plainWords", plainWords, 8}} {
				if got := scan.f(b); got > want || got < want && len(b)-got >= scan.block {
					t.Fatalf("%s(%q) = %d, first byte to look at %d", scan.name, b, got, want)
				}
			}
		}
	})
}

// piece is one delivered line: a line's text or a MaxLine piece of it.
type piece struct {
	text  []byte
	split bool // not the last piece of its line
}

// wantSplitPieces is wantPieces with each piece's split mark.
func wantSplitPieces(in []byte) []piece {
	var out []piece
	cut := func(line []byte) {
		for len(line) > MaxLine {
			n := refCut(line)
			out = append(out, piece{line[:n], true})
			line = line[n:]
		}
		out = append(out, piece{line, false})
	}
	for {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			break
		}
		cut(in[:i])
		in = in[i+1:]
	}
	if len(in) > 0 {
		cut(in)
	}
	return out
}

// FuzzSplitter drives one stream's splitter as the pump does (reads of
// random sizes after MaxLine of room, the unfinished line put in front),
// in every destination: text and JSON for podvisor's stdout, a log file of
// bare lines (written from the read buffer), with timestamps, in JSON, and
// off; the file is small, so that it rotates often. Each destination must
// hold every piece (wantSplitPieces) in order, framed as its format says,
// every rotated file whole lines; and the tail must be what adding the
// pieces one by one gives.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint32(0), uint32(0), uint32(7), uint16(3), uint16(200))
	f.Add([]byte("no newline"), uint32(MaxLine), uint32(3), uint32(1), uint16(200), uint16(5))
	f.Add([]byte("a\nb\n\n\nc"), uint32(MaxLine-1), uint32(1), uint32(99), uint16(0), uint16(64))
	f.Add([]byte("\xff\xfe\x00\x1b[31m\r\n\"q\"\\\n"), uint32(2*MaxLine+1), uint32(0), uint32(5), uint16(65535), uint16(1))
	f.Add([]byte("é€😀 after\n"), uint32(MaxLine-1), uint32(0), uint32(11), uint16(30), uint16(300)) // a character across the cut
	f.Fuzz(func(t *testing.T, in []byte, long, pos, seed uint32, maxRead, maxSize uint16) {
		if n := int(long % (3*MaxLine + 2)); n > 0 {
			p := 0
			if len(in) > 0 {
				p = int(pos % uint32(len(in)+1))
			}
			in = append(append(append([]byte{}, in[:p]...), bytes.Repeat([]byte{'y'}, n)...), in[p:]...)
		}
		want := wantSplitPieces(in)
		at := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
		const stamp = "2026-01-02T03:04:05.678Z"
		ref := NewTail(20, 300)
		for _, p := range want {
			ref.Add("stderr", p.text, at)
		}
		refLines, refNext := ref.Last(-1)
		for _, dest := range []string{"text", "json", "file", "file-stamps", "file-json", "off"} {
			format, _ := strings.CutPrefix(dest, "file-")
			s := NewSink(io.Discard, Options{Format: format, Width: 1, Now: func() time.Time { return at }})
			sp := newSplitter(s.newSource("p", "stderr", 3), "stderr", NewTail(20, 300), nil)
			path := filepath.Join(t.TempDir(), "p.log")
			switch dest {
			case "file", "file-stamps", "file-json":
				if format != "json" {
					format = "text"
				}
				sp.file = s.File(FileOptions{Path: path, MaxSize: 1 + int64(maxSize), MaxFiles: 1000, Format: format, Timestamps: dest == "file-stamps"})
			case "off":
				sp.off = true
			}
			var out []byte
			b := s.getBatch()
			pass := func() {
				if sp.file != nil || sp.off {
					sp.written(s, b)
					return
				}
				out = append(out, b.data...)
				b.data, b.lines, b.counts = b.data[:0], 0, b.counts[:0]
			}
			rng := seed
			buf := make([]byte, MaxLine+3*MaxLine)
			var stampBuf [40]byte
			st, _ := s.readStamp(stampBuf[:0], true) // the same for every read
			st = sp.stamp(st, stampBuf[:0], at)
			for rest := in; len(rest) > 0; {
				rng = rng*1664525 + 1013904223
				// At most some thousands of reads, however long the input.
				n := min(len(in)/4096+1+int(rng>>8)%(1+int(maxRead)*50), len(rest), len(buf)-MaxLine)
				copy(buf[MaxLine:], rest[:n])
				rest = rest[n:]
				sp.take(s, b, buf, MaxLine, n, st, at)
				pass()
			}
			sp.finish(s, b, st, at)
			pass()
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if lines, next := sp.tail.Last(-1); next != refNext || !reflect.DeepEqual(lines, refLines) {
				t.Fatalf("%s: tail %+v next %d, want %+v next %d", dest, lines, next, refLines, refNext)
			}
			if sp.file != nil {
				out = nil
				for _, name := range logFiles(t, path) {
					data, err := os.ReadFile(name)
					if err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					if len(data) > 0 && data[len(data)-1] != '\n' {
						t.Fatalf("%s: %s does not end at a line's end", dest, name)
					}
					if len(data) > 1+int(maxSize) && bytes.Count(data, nl) > 1 {
						t.Fatalf("%s: %s has %d bytes and %d lines, over max_size %d", dest, name, len(data), bytes.Count(data, nl), 1+int(maxSize))
					}
					out = append(out, data...)
				}
			}
			var exp []byte
			for _, p := range want {
				switch dest {
				case "text":
					exp = append(append(append(exp, "p | "...), p.text...), '\n')
				case "file":
					exp = append(append(exp, p.text...), '\n')
				case "file-stamps":
					exp = append(append(append(exp, stamp+" "...), p.text...), '\n')
				case "json", "file-json":
					exp = appendJSON(exp, []byte(stamp), sp.src, p.text, p.split)
				}
			}
			if !bytes.Equal(out, exp) {
				t.Fatalf("%s: got\n%q\nwant\n%q", dest, out, exp)
			}
			if strings.HasSuffix(dest, "json") {
				for line := range bytes.Lines(out) {
					if !json.Valid(line) {
						t.Fatalf("%s: invalid JSON line %q", dest, line)
					}
				}
			}
		}
	})
}

// FuzzCutUTF8 (issue 34 item 12): a line longer than MaxLine with UTF-8
// characters around the cut, read in reads of any size, through the JSON
// format: the pieces concatenate to the line, none is longer than MaxLine
// (nor shorter than MaxLine-3 but the last), no cut falls inside a valid
// UTF-8 character, and so a valid line's pieces decode to it without a
// U+FFFD.
func FuzzCutUTF8(f *testing.F) {
	f.Add("é", uint16(1), uint8(1), uint32(1), uint8(100), false)
	f.Add("€", uint16(2), uint8(2), uint32(7), uint8(3), true)
	f.Add("😀", uint16(3), uint8(5), uint32(9), uint8(255), false)
	f.Add("\xf0\x9f\x98", uint16(2), uint8(1), uint32(3), uint8(1), true)
	f.Add("a\xe2\x82", uint16(0), uint8(3), uint32(5), uint8(7), false)
	f.Fuzz(func(t *testing.T, mid string, back uint16, reps uint8, seed uint32, maxRead uint8, newline bool) {
		if strings.ContainsRune(mid, '\n') || len(mid) > 64 {
			return
		}
		// ASCII up to a little before MaxLine (or 2*MaxLine), then mid,
		// repeated, so that a character of mid straddles the cut.
		at := MaxLine - int(back%8)
		if back&0x100 != 0 {
			at = 2*MaxLine - int(back%8)
		}
		line := append(bytes.Repeat([]byte{'x'}, at), bytes.Repeat([]byte(mid), 1+int(reps%8))...)
		line = append(line, "tail"...)
		in := line
		if newline {
			in = append(append([]byte{}, line...), '\n')
		}
		var out bytes.Buffer
		s := NewSink(&out, Options{Format: "json"})
		var pieces [][]byte
		done := s.Attach("p", "stdout", &chunkReader{data: in, seed: seed, max: 1 + int(maxRead)*600}, func(l []byte) {
			pieces = append(pieces, append([]byte{}, l...))
		})
		<-done
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(pieces, nil); !bytes.Equal(got, line) {
			t.Fatalf("pieces join to %d bytes, want the line's %d", len(got), len(line))
		}
		starts := map[int]bool{} // where the line's characters begin, decoded from its start
		for i := 0; i < len(line); {
			starts[i] = true
			_, size := utf8.DecodeRune(line[i:])
			i += size
		}
		cut := 0
		for i, p := range pieces[:len(pieces)-1] {
			if len(p) > MaxLine || len(p) < MaxLine-3 {
				t.Fatalf("piece %d has %d bytes, want %d..%d", i, len(p), MaxLine-3, MaxLine)
			}
			cut += len(p)
			if !starts[cut] {
				t.Fatalf("cut at %d splits a UTF-8 character: %q|%q", cut, line[max(0, cut-4):cut], line[cut:min(len(line), cut+4)])
			}
		}
		if len(pieces[len(pieces)-1]) > MaxLine {
			t.Fatalf("last piece has %d bytes", len(pieces[len(pieces)-1]))
		}
		var text string
		for l := range strings.Lines(out.String()) {
			var rec struct{ Process, Line string }
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("invalid JSON line: %v", err)
			}
			if rec.Process == "p" {
				text += rec.Line
			}
		}
		if utf8.Valid(line) && text != string(line) {
			t.Fatalf("the JSON pieces decode to %d bytes (U+FFFD: %v), want the line's %d", len(text), strings.ContainsRune(text, utf8.RuneError), len(line))
		}
	})
}
