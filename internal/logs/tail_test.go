package logs

import (
	"fmt"
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

func TestTailsTapAndDisabled(t *testing.T) {
	ts := NewTails(2, 1<<10)
	var seen []string
	tap := ts.Tap("web", "stdout", func(b []byte) { seen = append(seen, string(b)) })
	tap([]byte("one"), time.Now())
	tap([]byte("two"), time.Now())
	tap([]byte("three"), time.Now())
	if got, _ := ts.Get("web").Last(-1); tailText(got) != "two,three" {
		t.Fatalf("tail %q", tailText(got))
	}
	if len(seen) != 3 {
		t.Fatalf("next tap saw %v", seen)
	}
	off := NewTails(0, 1<<10)
	if off.Tap("web", "stdout", nil) != nil {
		t.Fatal("tail 0 must not install a tap")
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
