package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
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
// non-empty unterminated tail, delivered in order, each cut into MaxLine
// pieces (a line of exactly k*MaxLine bytes gives k pieces, an empty line
// one empty piece).
func wantPieces(in []byte) [][]byte {
	var out [][]byte
	cut := func(line []byte) {
		for len(line) > MaxLine {
			out = append(out, line[:MaxLine])
			line = line[MaxLine:]
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
