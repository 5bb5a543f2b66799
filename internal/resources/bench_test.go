package resources

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkWalk200x3 measures one uncached walk over 200 supervised trees of
// a shell and 3 descendants each (800 processes), reported as podvisor's own
// CPU per walk (cpu-ms/walk), the figure the 20 ms budget is about.
//
//	go test -run '^$' -bench Walk200x3 -benchtime 50x ./internal/resources/
func BenchmarkWalk200x3(b *testing.B) {
	roots := make([]Root, 0, 200)
	for i := range 200 {
		cmd := startTreeB(b, "sleep 1000 & sleep 1000 & sleep 1000 & wait")
		roots = append(roots, Root{Name: "p" + strconv.Itoa(i), Pid: cmd})
	}
	s := New(os.Getpid(), 0)
	// Wait until every tree is complete.
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := 0
		for _, u := range s.Sample(roots) {
			n += u.Processes
		}
		if n == 800 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of 800 processes found", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		s.Sample(roots)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/walk")
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startTreeB(b *testing.B, script string) int {
	b.Helper()
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", script}, &os.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = unix.Kill(-p.Pid, unix.SIGKILL)
		_, _ = p.Wait()
	})
	return p.Pid
}
