package logs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func tailText(ls []TailLine) string {
	var b []string
	for _, l := range ls {
		b = append(b, l.Line)
	}
	return strings.Join(b, ",")
}

func TestTailKeepsLastLines(t *testing.T) {
	tl := NewTail(3, 1<<10)
	if got, next := tl.Last(10); len(got) != 0 || next != 1 {
		t.Fatalf("empty tail: %v next %d", got, next)
	}
	for i := range 5 {
		tl.Add("stdout", []byte(fmt.Sprint(i)), time.Now())
	}
	got, next := tl.Last(10)
	if tailText(got) != "2,3,4" || next != 6 {
		t.Fatalf("Last(10) = %q next %d, want 2,3,4 and 6", tailText(got), next)
	}
	if got, _ := tl.Last(2); tailText(got) != "3,4" {
		t.Fatalf("Last(2) = %q, want 3,4", tailText(got))
	}
	if got, _, _ := tl.Since(4); tailText(got) != "3,4" || got[0].Seq != 4 {
		t.Fatalf("Since(4) = %q, want 3,4", tailText(got))
	}
}

func TestTailBoundedInBytes(t *testing.T) {
	tl := NewTail(100, 10)
	for _, s := range []string{"aaaa", "bbbb", "cccc"} {
		tl.Add("stdout", []byte(s), time.Now())
	}
	if got, _ := tl.Last(-1); tailText(got) != "bbbb,cccc" {
		t.Fatalf("byte bound: %q, want bbbb,cccc", tailText(got))
	}
	tl.Add("stderr", []byte(strings.Repeat("x", 50)), time.Now())
	got, _ := tl.Last(-1)
	if len(got) != 1 || len(got[0].Line) != 10 || got[0].Stream != "stderr" {
		t.Fatalf("a line over the byte bound must be clipped and alone: %+v", got)
	}
}

func TestTailFollowWakes(t *testing.T) {
	tl := NewTail(10, 1<<10)
	_, next, wake := tl.Since(1)
	done := make(chan []TailLine)
	go func() {
		<-wake
		got, _, _ := tl.Since(next)
		done <- got
	}()
	tl.Add("stdout", []byte("hello"), time.Now())
	select {
	case got := <-done:
		if tailText(got) != "hello" {
			t.Fatalf("follower got %q", tailText(got))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follower never woken")
	}
}

// Empty lines first: no text in the ring yet, but lines in it. This
// crashed podvisor (a division by zero) for any process whose output began
// with two blank lines.
func TestTailEmptyLinesFirst(t *testing.T) {
	tl := NewTail(10, 100)
	tl.Add("stdout", nil, time.Now())
	tl.Add("stdout", []byte{}, time.Now())
	tl.Add("stdout", []byte("x"), time.Now())
	if got, next := tl.Last(-1); tailText(got) != ",,x" || next != 4 {
		t.Fatalf("tail %q, next %d", tailText(got), next)
	}
}

func TestTailsForAndDisabled(t *testing.T) {
	ts := NewTails(2, 1<<10)
	if ts.For("web") != ts.Get("web") {
		t.Fatal("For must give the process's tail")
	}
	if NewTails(0, 1<<10).For("web") != nil || (*Tails)(nil).For("web") != nil {
		t.Fatal("tail 0 must give readers no tail to fill")
	}
}

// addLines (a whole read at once, copying only the lines that stay) and
// addRegion (the same from the read's bytes, walking back over the lines
// that stay) leave a tail exactly as adding the lines one by one does: same
// lines, same Seq, same times, across random line counts, lengths and
// limits, seeded.
func TestTailAddLinesMatchesAdd(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 5))
		maxLines, maxBytes := 1+rng.IntN(20), 1+rng.IntN(400)
		one, batch, region := NewTail(maxLines, maxBytes), NewTail(maxLines, maxBytes), NewTail(maxLines, maxBytes)
		for read := range 1 + rng.IntN(6) {
			at := time.Unix(int64(read), 0)
			var lines [][]byte
			for range rng.IntN(40) {
				lines = append(lines, bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(maxBytes*2/3+2)))
			}
			stderr := rng.IntN(2) == 0
			stream := map[bool]string{true: "stderr", false: "stdout"}[stderr]
			var whole []byte
			for _, l := range lines {
				one.Add(stream, l, at)
				whole = append(append(whole, l...), '\n')
			}
			batch.addLines(stderr, lines, at)
			region.addRegion(stderr, whole, len(lines), at)
		}
		a, na := one.Last(-1)
		b, nb := batch.Last(-1)
		if na != nb || !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d (max %d lines, %d bytes): one by one %v next %d; batched %v next %d", seed, maxLines, maxBytes, a, na, b, nb)
		}
		if c, nc := region.Last(-1); na != nc || !reflect.DeepEqual(a, c) {
			t.Fatalf("seed %d (max %d lines, %d bytes): one by one %v next %d; by region %v next %d", seed, maxLines, maxBytes, a, na, c, nc)
		}
	}
}

// Through the pump: a tail fed a read at a time holds the last lines of a
// flood with their Seq.
func TestPumpFillsTail(t *testing.T) {
	const n = 100_000
	s := NewSink(io.Discard, Options{})
	tail := NewTail(200, DefaultTailBytes)
	r, w, err := OpenPipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	s.AttachPipe("p", "stdout", r, tail, nil, func() { close(done) })
	go func() {
		defer w.Close()
		var b []byte
		for i := range n {
			b = fmt.Appendf(b, "line %d\n", i)
		}
		_, _ = w.Write(b)
	}()
	<-done
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines, next := tail.Last(-1)
	if next != n+1 || len(lines) != 200 {
		t.Fatalf("next %d, %d lines; want %d, 200", next, len(lines), n+1)
	}
	for i, l := range lines {
		if want := fmt.Sprintf("line %d", n-200+i); l.Line != want || l.Seq != uint64(n-200+i+1) || l.Stream != "stdout" {
			t.Fatalf("line %d: %+v, want %q", i, l, want)
		}
	}
}

// A quiet process's tail must cost next to nothing (200 of them are in the
// RSS budget).
func TestQuietTailIsSmall(t *testing.T) {
	ts := NewTails(200, DefaultTailBytes)
	tl := ts.Get("quiet")
	if cap(tl.meta) != 0 || cap(tl.buf) != 0 {
		t.Fatalf("quiet tail preallocated %d lines, %d bytes", cap(tl.meta), cap(tl.buf))
	}
}

func BenchmarkTailAdd(b *testing.B) {
	tl := NewTail(200, DefaultTailBytes)
	line := []byte(strings.Repeat("x", 80))
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		tl.Add("stdout", line, now)
	}
}

func TestTailsSetMaxLines(t *testing.T) {
	ts := NewTails(5, 1<<10)
	tl := ts.Get("a")
	for i := range 5 {
		tl.Add("stdout", []byte(fmt.Sprint(i)), time.Now())
	}
	ts.SetMaxLines(2)
	tl.Add("stdout", []byte("5"), time.Now())
	if got, _ := tl.Last(-1); tailText(got) != "4,5" {
		t.Fatalf("after shrinking to 2: %q", tailText(got))
	}
}

// The ring wraps lines around its end and keeps them whole, in order, with
// their streams, through many evictions.
func TestTailRingWraps(t *testing.T) {
	tl := NewTail(7, 100)
	var want []string
	for i := range 500 {
		line := strings.Repeat(string(rune('a'+i%26)), 1+i%23)
		stream := "stdout"
		if i%3 == 0 {
			stream = "stderr"
		}
		tl.Add(stream, []byte(line), time.Unix(0, int64(i)))
		want = append(want, line)
		got, next := tl.Last(-1)
		if next != uint64(i+2) {
			t.Fatalf("next %d after %d lines", next, i+1)
		}
		total := 0
		for k, l := range got {
			j := i - len(got) + 1 + k
			if l.Line != want[j] || l.Seq != uint64(j+1) || l.Time.UnixNano() != int64(j) || (l.Stream == "stderr") != (j%3 == 0) {
				t.Fatalf("after %d lines, line %d = %+v, want %q seq %d", i+1, k, l, want[j], j+1)
			}
			total += len(l.Line)
		}
		if len(got) > 7 || total > 100 || len(got) == 0 {
			t.Fatalf("after %d lines: %d lines, %d bytes", i+1, len(got), total)
		}
	}
	if cap(tl.buf) > 100 {
		t.Fatalf("text ring grew to %d bytes, past the 100 bound", cap(tl.buf))
	}
}

// A line longer than MaxLine whose end has not come yet is cut into
// pieces from the unfinished line, which then moves to its front: the
// tail must get the pieces as they were (it got the moved bytes once).
func TestTailGetsPiecesOfUnfinishedLine(t *testing.T) {
	s := NewSink(io.Discard, Options{})
	tail := NewTail(10, 1<<20)
	sp := newSplitter(s.newSource("p", "stdout", 0), "stdout", tail, nil)
	b := s.getBatch()
	line := append(bytes.Repeat([]byte{'a'}, MaxLine), bytes.Repeat([]byte{'b'}, 100)...)
	sp.feed(s, b, line[:1000], nil, time.Time{})
	sp.feed(s, b, line[1000:], nil, time.Time{})
	lines, _ := tail.Last(-1)
	if len(lines) != 1 {
		t.Fatalf("tail %d lines, want the first piece", len(lines))
	}
	if got := lines[0].Line; got != string(line[:MaxLine]) {
		t.Fatalf("tail piece of %d bytes (%.10q...) is not the first piece, %d a's", len(got), got, MaxLine)
	}
	s.release(b)
}
