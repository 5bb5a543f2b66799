package logs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/testproc"
)

// BenchmarkMillionLines measures the wall time for a child to write 1,000,000
// lines of 100 bytes: straight to a file ("direct"), and through a pipe, the
// reader, the sink and a file ("text", "json"). One op is one whole run:
//
//	go test -run '^$' -bench MillionLines -benchtime 5x ./internal/logs
func BenchmarkMillionLines(b *testing.B) {
	const n, size = 1_000_000, 100
	argv := testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "o")
	r := newReaper(b)
	out := filepath.Join(b.TempDir(), "out")

	for _, mode := range []string{"direct", "text", "json"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				runToFile(b, r, mode, argv, out)
			}
			b.SetBytes(n * (size + 1))
		})
	}
}

// runToFile runs argv with its stdout going to the file out, directly or
// through a sink in the given format.
func runToFile(tb testing.TB, r *proc.Reaper, mode string, argv []string, out string) {
	f, err := os.Create(out)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if mode == "direct" {
		c, err := proc.Spawn(r, proc.Spec{Argv: argv, Stdout: f})
		if err != nil {
			tb.Fatal(err)
		}
		if ex := <-c.Done(); ex.Code() != 0 {
			tb.Fatalf("exit %d", ex.Code())
		}
		return
	}
	s := NewSink(f, Options{Format: mode, Width: 8})
	c := attachChild(tb, r, s, "bench", argv, nil, nil)
	if ex := c.wait(tb, time.Minute); ex.Code() != 0 {
		tb.Fatalf("exit %d", ex.Code())
	}
	if err := s.Close(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// TestPipelineOverhead reports the wall-time ratio of the text pipeline to a
// direct write for 1,000,000 lines of 100 bytes, alternating the two so that
// load from other processes hits both alike; the best and median runs are
// shown. It is a measurement, not a check, and runs only on request:
//
//	PODVISOR_BENCH=1 go test -run PipelineOverhead -v ./internal/logs
func TestPipelineOverhead(t *testing.T) {
	if os.Getenv("PODVISOR_BENCH") == "" {
		t.Skip("set PODVISOR_BENCH=1 to measure")
	}
	rounds, _ := strconv.Atoi(os.Getenv("PODVISOR_BENCH_ROUNDS"))
	if rounds <= 0 {
		rounds = 7
	}
	argv := testproc.Argv("lines", "1000000", "100", "o")
	r := newReaper(t)
	out := filepath.Join(t.TempDir(), "out")
	times := map[string][]time.Duration{}
	selfCPU := map[string]time.Duration{}  // podvisor's side: reader, sink, writes
	childCPU := map[string]time.Duration{} // the generator
	modes := []string{"direct", "text", "json"}
	for range rounds {
		for _, mode := range modes {
			self0, child0 := cpuTimes(t)
			start := time.Now()
			runToFile(t, r, mode, argv, out)
			times[mode] = append(times[mode], time.Since(start))
			self1, child1 := cpuTimes(t)
			selfCPU[mode] += self1 - self0
			childCPU[mode] += child1 - child0
		}
	}
	for _, mode := range modes {
		slices.Sort(times[mode])
	}
	best, med := times["direct"][0], times["direct"][rounds/2]
	for _, mode := range modes {
		d := times[mode]
		t.Logf("%-6s wall best %4.0f ms (%.2fx)  median %4.0f ms (%.2fx)  cpu: child %4.0f ms, podvisor %4.0f ms", mode,
			ms(d[0]), ms(d[0])/ms(best), ms(d[rounds/2]), ms(d[rounds/2])/ms(med),
			ms(childCPU[mode])/float64(rounds), ms(selfCPU[mode])/float64(rounds))
	}
}

// cpuTimes returns the user+system CPU time of this process and of its
// reaped children.
func cpuTimes(t *testing.T) (self, children time.Duration) {
	var ru syscall.Rusage
	sum := func() time.Duration {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	self = sum()
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	return self, sum()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
