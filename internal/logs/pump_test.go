package logs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
)

// The pump's interleavings, seeded: pipes whose writers write lines in
// random pieces and sizes (up to floods that fill the buffer), pause, and
// hang up at random moments, some before the pipe is even attached (data
// and EOF already there: no edge will come), some with nothing written;
// new pipes attached while others end (fd numbers reused). Every stream
// reaches EOF exactly once, every line arrives whole and in order, and a
// message logged from atEOF comes after that stream's last line (B12).
func TestPumpInterleavings(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			pumpRound(t, seed, 60)
		})
	}
}

func pumpRound(t *testing.T, seed uint64, streams int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	var out syncBuffer
	s := NewSink(&out, Options{})
	type plan struct {
		name        string
		lines       []string
		early       bool // written and closed before AttachPipe
		piece, wait int
	}
	plans := make([]plan, streams)
	for i := range plans {
		p := &plans[i]
		p.name = fmt.Sprintf("s%02d", i)
		n := []int{0, 1, 5, 200, 3000}[rng.IntN(5)]
		for j := range n {
			p.lines = append(p.lines, fmt.Sprintf("%s-%d-%s", p.name, j, strings.Repeat("x", rng.IntN(300))))
		}
		p.early = rng.IntN(4) == 0
		p.piece = 1 + rng.IntN(100_000)
		p.wait = rng.IntN(3)
	}
	var eofs sync.Map
	var wg sync.WaitGroup
	for i := range plans {
		p := plans[i]
		r, w, err := OpenPipe()
		if err != nil {
			t.Fatal(err)
		}
		data := []byte(strings.Join(p.lines, "\n"))
		if len(p.lines) > 0 {
			data = append(data, '\n')
		}
		write := func() {
			defer w.Close()
			for len(data) > 0 {
				k := min(p.piece, len(data))
				if _, err := w.Write(data[:k]); err != nil {
					t.Error(err)
					return
				}
				data = data[k:]
				for range p.wait {
					runtime.Gosched()
				}
			}
		}
		if p.early {
			if len(data) > 60<<10 { // must fit the pipe: nobody reads yet
				data = data[:0]
				p.lines = nil
				plans[i].lines = nil
			}
			write()
		}
		wg.Add(1)
		s.AttachPipe(p.name, "stdout", r, nil, nil, func() {
			if _, dup := eofs.LoadOrStore(p.name, true); dup {
				t.Errorf("%s: atEOF twice", p.name)
			}
			s.Logger().Info("eof " + p.name)
			wg.Done()
		})
		if !p.early {
			go write()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second * testproc.Slowdown()):
		t.Fatal("not every stream reached EOF")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.pumpFallbacks.Load(); n != 0 {
		t.Errorf("%d streams read without the pump", n)
	}
	got := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		name, text, ok := strings.Cut(l, " | ")
		if !ok {
			t.Fatalf("unframed line %q", l)
		}
		if name == "podvisor" {
			ended := strings.TrimSuffix(strings.TrimPrefix(text, `level=INFO msg="eof `), `"`)
			got[ended] = append(got[ended], "<eof>")
			continue
		}
		got[name] = append(got[name], text)
	}
	for _, p := range plans {
		want := append(append([]string(nil), p.lines...), "<eof>")
		if g := got[p.name]; !slices.Equal(g, want) {
			t.Errorf("%s (early %v, piece %d): %d lines, want %d (the eof message last)", p.name, p.early, p.piece, len(g), len(want))
		}
	}
}

// The pump reads hundreds of pipes without a goroutine or a read buffer
// each (the point of it: RSS with hundreds of children), and hung-up pipes
// end without a read.
func TestPumpHasNoGoroutinePerStream(t *testing.T) {
	var out bytes.Buffer
	s := NewSink(&out, Options{})
	before := runtime.NumGoroutine()
	var ws []*os.File
	var wg sync.WaitGroup
	for i := range 300 {
		r, w, err := OpenPipe()
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
		wg.Add(1)
		s.AttachPipe(fmt.Sprint("p", i), "stdout", r, nil, nil, wg.Done)
	}
	if n := runtime.NumGoroutine() - before; n > 1 {
		t.Errorf("%d more goroutines for 300 streams, want 1 (the pump)", n)
	}
	for _, w := range ws {
		w.Close()
	}
	wg.Wait()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 5*time.Second, "pump gone", func() bool { return runtime.NumGoroutine() <= before })
}
