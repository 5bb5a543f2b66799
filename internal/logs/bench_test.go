package logs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// BenchmarkFeed measures podvisor's own work per read of a flood of
// 100-byte lines (a full 256 KiB read, lines straddling reads), without a
// child or a pipe: split, format and hand on to a writer that discards
// them ("text", "json"), or write them to a log file that is /dev/null
// ("file": the bare lines, "file-json", "file-stamps"). Each stream keeps
// a tail, as podvisor's do.
//
//	go test -run '^$' -bench Feed -benchmem ./internal/logs
func BenchmarkFeed(b *testing.B) {
	var line [100]byte
	data := make([]byte, 0, 4<<20)
	for i := 0; len(data) < cap(data)-len(line); i++ {
		copy(line[:], fmt.Sprintf("%099d\n", i))
		data = append(data, line[:]...)
	}
	for _, mode := range []string{"text", "json", "file", "file-json", "file-stamps"} {
		b.Run(mode, func(b *testing.B) {
			format, _ := strings.CutPrefix(mode, "file-")
			s := NewSink(io.Discard, Options{Format: format, Width: 8})
			defer s.Close(context.Background())
			sp := newSplitter(s.newSource("bench", "stdout", 1), "stdout", NewTail(200, DefaultTailBytes), nil)
			if strings.HasPrefix(mode, "file") {
				if format == "file" || format == "stamps" {
					format = "text"
				}
				sp.file = s.File(FileOptions{Path: os.DevNull, MaxSize: 1 << 40, MaxFiles: 2, Format: format, Timestamps: mode == "file-stamps"})
			}
			buf := make([]byte, MaxLine+busyPipeSize)
			var stampBuf [40]byte
			b.SetBytes(busyPipeSize)
			off := 0
			for b.Loop() {
				if off+busyPipeSize > len(data) {
					off = 0
				}
				n := copy(buf[MaxLine:], data[off:off+busyPipeSize])
				off += n
				stamp, at := s.readStamp(stampBuf[:0], true)
				stamp = sp.stamp(stamp, stampBuf[:0], at)
				bt := s.getBatch()
				sp.take(s, bt, buf, MaxLine, n, stamp, at)
				if sp.file != nil {
					sp.written(s, bt)
					s.release(bt)
				} else {
					s.queue(bt)
				}
			}
		})
	}
}
