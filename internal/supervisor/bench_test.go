package supervisor_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/proc"

	"github.com/podvisor/podvisor/internal/launch"
	. "github.com/podvisor/podvisor/internal/supervisor"
)

// These benchmarks run real processes through the real launcher (reaper,
// pipes, log sink to io.Discard). They report the figures the runtime issue
// sets targets for, as custom metrics; ns/op is the whole cycle.

type realRig struct {
	reaper *proc.Reaper
	sink   *logs.Sink
	cancel context.CancelFunc
	dir    string
}

func newRealRig(b *testing.B) *realRig {
	b.Helper()
	if err := proc.BecomeSubreaper(); err != nil {
		b.Logf("subreaper: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &realRig{reaper: proc.NewReaper(nil), sink: logs.NewSink(io.Discard, logs.Options{}), cancel: cancel, dir: b.TempDir()}
	go r.reaper.Run(ctx)
	b.Cleanup(func() {
		cancel()
		c, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		_ = r.sink.Close(c)
	})
	return r
}

// runtimeDir is the launcher's RuntimeDir: the rig's directory.
func (r *realRig) runtimeDir() (string, error) { return r.dir, nil }

func (r *realRig) supervisor(b *testing.B, yml string) *Supervisor {
	return r.wrapped(b, yml, func(l Launcher) Launcher { return l })
}

// wrapped is supervisor with the real launcher seen through wrap.
func (r *realRig) wrapped(b *testing.B, yml string, wrap func(Launcher) Launcher) *Supervisor {
	b.Helper()
	l := &launch.Launcher{Reaper: r.reaper, Sink: r.sink, BaseEnv: os.Environ(), RuntimeDir: r.runtimeDir, Log: slog.New(slog.DiscardHandler)}
	sup, err := New(Options{Config: parseB(b, yml), Launcher: wrap(l), Checkers: l.Checkers()})
	if err != nil {
		b.Fatal(err)
	}
	return sup
}

func parseB(b *testing.B, yml string) *config.Config {
	b.Helper()
	cfg, err := config.Parse("bench.yaml", []byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// waitFor polls the snapshot; the poll period (50µs) bounds the error.
func waitFor(sup *Supervisor, cond func(Snapshot) bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond(sup.Snapshot()) {
			return true
		}
		time.Sleep(50 * time.Microsecond)
	}
	return false
}

func fanOutYAML(n int) string {
	var sb strings.Builder
	sb.WriteString("shutdown_timeout: 30s\nprocesses:\n  root:\n    command: [sleep, \"1000\"]\n")
	for i := range n {
		fmt.Fprintf(&sb, "  s%04d:\n    command: [sleep, \"1000\"]\n    depends_on: [root]\n", i)
	}
	return sb.String()
}

// BenchmarkFanOut: N sleep services depending on one root. Reports the time
// until all are running (start-ms) and the reverse-order teardown time after
// SIGTERM (teardown-ms).
func BenchmarkFanOut(b *testing.B) {
	for _, n := range []int{200, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rig := newRealRig(b)
			yml := fanOutYAML(n)
			var starts, downs []time.Duration
			for b.Loop() {
				sup := rig.supervisor(b, yml)
				sigs := make(chan os.Signal, 1)
				done := make(chan Outcome, 1)
				t0 := time.Now()
				go func() { done <- sup.Run(context.Background(), sigs) }()
				if !waitFor(sup, func(s Snapshot) bool { return s.Ready }, 30*time.Second) {
					b.Fatal("not all running")
				}
				starts = append(starts, time.Since(t0))
				t1 := time.Now()
				sigs <- syscall.SIGTERM
				if o := <-done; o.ExitCode() != 0 {
					b.Fatalf("exit %d: %+v", o.ExitCode(), o)
				}
				downs = append(downs, time.Since(t1))
			}
			b.ReportMetric(ms(median(starts)), "start-ms")
			b.ReportMetric(ms(median(downs)), "teardown-ms")
		})
	}
}

// BenchmarkChainTeardown: a 10-chain where each process takes 100 ms to exit
// after SIGTERM. Reports the teardown overhead per step beyond those 100 ms
// (overhead-ms/step, which includes the kernel's cost of ending each process)
// and podvisor's own reaction time: from reaping a process to sending the
// stop signal to the one it depended on (react-µs, median).
func BenchmarkChainTeardown(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("processes:\n")
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		// The test binary itself, as a child that takes exactly 100ms to exit
		// after SIGTERM (see TestMain): no shell or fork noise in the figure.
		fmt.Fprintf(&sb, "  p%d:\n    command: [%q]\n    env: {%s: term100}\n    ready: {notify: \"fd:3\"}\n", i, self, benchChildEnv)
		if i > 0 {
			fmt.Fprintf(&sb, "    depends_on: {p%d: started}\n", i-1)
		}
	}
	rig := newRealRig(b)
	var steps, reacts []time.Duration
	for b.Loop() {
		var rec *recordingLauncher
		sup := rig.wrapped(b, sb.String(), func(l Launcher) Launcher {
			rec = &recordingLauncher{Launcher: l}
			return rec
		})
		sigs := make(chan os.Signal, 1)
		done := make(chan Outcome, 1)
		go func() { done <- sup.Run(context.Background(), sigs) }()
		if !waitFor(sup, func(s Snapshot) bool { return s.Ready }, 10*time.Second) {
			b.Fatal("not running")
		}
		t0 := time.Now()
		sigs <- syscall.SIGTERM
		<-done
		steps = append(steps, (time.Since(t0)-10*100*time.Millisecond)/10)
		for i := 9; i > 0; i-- {
			exited := rec.at("exit", fmt.Sprintf("p%d", i))
			termed := rec.at("term", fmt.Sprintf("p%d", i-1))
			reacts = append(reacts, termed.Sub(exited))
		}
	}
	b.ReportMetric(float64(median(steps).Microseconds())/1000, "overhead-ms/step")
	b.ReportMetric(float64(median(reacts).Microseconds()), "react-µs")
}

// recordingLauncher notes when each child is sent SIGTERM and when its exit
// was reaped (proc.Exit.At, taken right after wait4).
type recordingLauncher struct {
	Launcher
	mu    sync.Mutex // guards times
	times map[string]time.Time
}

func (l *recordingLauncher) note(key string, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.times == nil {
		l.times = map[string]time.Time{}
	}
	if _, ok := l.times[key]; !ok {
		l.times[key] = t
	}
}

func (l *recordingLauncher) at(what, name string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.times[what+" "+name]
}

func (l *recordingLauncher) Launch(p *config.Process, gen uint64, h Hooks) (Child, error) {
	exited := h.Exited
	h.Exited = func(ex proc.Exit) {
		l.note("exit "+p.Name, ex.At)
		exited(ex)
	}
	c, err := l.Launcher.Launch(p, gen, h)
	if err != nil {
		return nil, err
	}
	return &recordingChild{Child: c, l: l, name: p.Name}, nil
}

type recordingChild struct {
	Child
	l    *recordingLauncher
	name string
}

func (c *recordingChild) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGTERM {
		c.l.note("term "+c.name, time.Now())
	}
	return c.Child.Signal(sig)
}

// BenchmarkDependentStartLatency: time from a oneshot's exit being reaped to
// the start decision of its `completed` dependent (fork/exec excluded).
func BenchmarkDependentStartLatency(b *testing.B) {
	yml := "processes:\n  init: {command: [\"true\"], type: oneshot}\n  app:\n    command: [sleep, \"1000\"]\n    depends_on: {init: completed}\n"
	rig := newRealRig(b)
	var lat []time.Duration
	for b.Loop() {
		sup := rig.supervisor(b, yml)
		sigs := make(chan os.Signal, 1)
		done := make(chan Outcome, 1)
		go func() { done <- sup.Run(context.Background(), sigs) }()
		if !waitFor(sup, func(s Snapshot) bool { return s.Ready }, 10*time.Second) {
			b.Fatal("not running")
		}
		s := sup.Snapshot()
		app, init := s.Processes[0], s.Processes[1]
		lat = append(lat, app.StartedAt.Sub(init.ExitedAt))
		sigs <- syscall.SIGTERM
		<-done
	}
	b.ReportMetric(float64(median(lat).Nanoseconds())/1000, "p50-µs")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*9/10].Nanoseconds())/1000, "p90-µs")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkReadyHop: a chain of 10 services, each gated on the previous one's
// readiness. Each child records the instant it signals readiness (log line,
// notify: systemd, notify: fd) or, for the polled kinds (tcp, http with
// start_interval 10ms), binds its port 50ms after it started; the hop latency
// is from there to the dependent's start decision (fork/exec excluded).
func BenchmarkReadyHop(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"log", "systemd", "fd", "tcp", "http"} {
		b.Run(kind, func(b *testing.B) {
			rig := newRealRig(b)
			var hops []time.Duration
			base := 20000 + 100*len(kind) // distinct ports per kind
			for iter := 0; b.Loop(); iter++ {
				dir := b.TempDir()
				yml := hopChainYAML(self, kind, dir, base+(iter%50)*10)
				sup := rig.supervisor(b, yml)
				sigs := make(chan os.Signal, 1)
				done := make(chan Outcome, 1)
				go func() { done <- sup.Run(context.Background(), sigs) }()
				if !waitFor(sup, func(s Snapshot) bool { return s.Ready }, 20*time.Second) {
					b.Fatalf("chain not ready: %+v", sup.Snapshot())
				}
				snap := sup.Snapshot()
				byName := map[string]ProcessSnapshot{}
				for _, p := range snap.Processes {
					byName[p.Name] = p
				}
				for i := 1; i < 10; i++ {
					next := byName[fmt.Sprintf("h%d", i)]
					// From the instant the previous link signalled readiness
					// (or, for tcp/http, bound its port, 50ms after it
					// started) to its dependent's start decision.
					signalled := readStamp(b, fmt.Sprintf("%s/h%d", dir, i-1))
					hops = append(hops, next.StartedAt.Sub(signalled))
				}
				sigs <- syscall.SIGTERM
				<-done
			}
			slices.Sort(hops)
			b.ReportMetric(float64(hops[len(hops)/2].Microseconds())/1000, "p50-ms/hop")
			b.ReportMetric(float64(hops[len(hops)*9/10].Microseconds())/1000, "p90-ms/hop")
		})
	}
}
