package supervisor_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"

	"github.com/podvisor/podvisor/internal/launch"
	. "github.com/podvisor/podvisor/internal/supervisor"
)

// Effect-level benchmarks: the clocks are the children's own. Each child is
// bench/stampchild (C, built here with the system cc), which appends
// "NAME KIND NS" (CLOCK_REALTIME) to a file when it has exec'd, when it
// signals readiness, when it receives SIGTERM and just before it exits.
// Every latency is reported next to a floor measured in the same iteration
// (the `started` hop, or a shell loop), so machine noise mostly cancels.
// The decision-level benchmarks in bench_test.go stay as diagnostics.
//
// The trace* metrics split a hop at its hand-offs, from a launcher wrapper
// that notes when each hook is called: they show where the time goes.

// BenchmarkEffectReady: a 10-chain gated on readiness of the given kind, and
// in the same iteration a 10-chain gated on `started` (the floor). A hop is
// from the instant the previous link signalled readiness (tcp/http: bound
// its port, 50 ms after its exec) to the instant the next link has exec'd;
// the started hop is from one link's exec to the next one's. Reported:
// p50-ms/hop, started-ms/hop, over-started-ms (the difference of the
// medians: the cost of detecting readiness), and trace-* segments of the
// kind's hop: ready->hook (pipe/socket read, line split, matcher or probe),
// hook->launch (loop), launch->exec (spawner hand-off, fork/exec, the child
// reaching main).
func BenchmarkEffectReady(b *testing.B) {
	child := stampChildPath(b)
	for _, kind := range []string{"log", "systemd", "fd", "tcp", "http"} {
		b.Run(kind, func(b *testing.B) {
			rig := newRealRig(b)
			var hops, floor []time.Duration
			seg := segments{}
			for b.Loop() {
				dir := b.TempDir()
				f0 := filepath.Join(dir, "started")
				st, _ := runTraced(b, rig, effectChainYAML(child, f0, "started", nil), f0, 10)
				for i := 1; i < 10; i++ {
					floor = append(floor, st.at(b, fmt.Sprintf("h%d", i), "exec").Sub(st.at(b, fmt.Sprintf("h%d", i-1), "exec")))
				}
				var ports []int
				if kind == "tcp" || kind == "http" {
					ports = freePorts(b, 10)
				}
				f1 := filepath.Join(dir, kind)
				st, tl := runTraced(b, rig, effectChainYAML(child, f1, kind, ports), f1, 20)
				for i := 1; i < 10; i++ {
					prev, next := fmt.Sprintf("h%d", i-1), fmt.Sprintf("h%d", i)
					ready, exec := st.at(b, prev, "ready"), st.at(b, next, "exec")
					hops = append(hops, exec.Sub(ready))
					hook, ok1 := tl.get(prev + " readyhook")
					launch, ok2 := tl.get(next + " launch")
					if ok1 && ok2 {
						seg.add("trace-ready>hook-ms", hook.Sub(ready))
						seg.add("trace-hook>launch-ms", launch.Sub(hook))
						seg.add("trace-launch>exec-ms", exec.Sub(launch))
					}
				}
			}
			hop, fl := median(hops), median(floor)
			b.ReportMetric(float64(hop.Nanoseconds())/1e6, "p50-ms/hop")
			b.ReportMetric(float64(fl.Nanoseconds())/1e6, "started-ms/hop")
			b.ReportMetric(float64((hop-fl).Nanoseconds())/1e6, "over-started-ms")
			seg.report(b)
		})
	}
}

// BenchmarkEffectStop: ordered stop measured at the children. chain10: a
// 10-chain (each link depends on the previous one being started), every
// child taking 100 ms to exit after SIGTERM; a step is from one child's
// exit (its last instruction) to the SIGTERM receipt of the one it depended
// on. fanin200: 200 children depending on one root, exiting at once on
// SIGTERM; the step is from the last of them exiting to the root receiving
// SIGTERM. Reported: p50-ms/step, and trace-* segments: exit->reaped
// (kernel, SIGCHLD, reaper's wait4), reaped->hook (the exit gate: the log
// pump seeing both pipes at EOF), hook->sigterm (loop: group-empty check, step,
// signal), sigterm->term (signal delivery to the child's handler). For the
// fan-in, whose step waits for all 200, also: lastexit->anyhook (the last
// exit the loop heard of, of any of the 200) and anyhook->sigterm.
func BenchmarkEffectStop(b *testing.B) {
	child := stampChildPath(b)
	b.Run("chain10", func(b *testing.B) {
		rig := newRealRig(b)
		var steps []time.Duration
		seg := segments{}
		for b.Loop() {
			f := filepath.Join(b.TempDir(), "stamps")
			var sb strings.Builder
			sb.WriteString("shutdown_timeout: 30s\nprocesses:\n")
			for i := range 10 {
				fmt.Fprintf(&sb, "  p%d:\n    command: [%q, %q, p%d, none, \"\", \"100\"]\n", i, child, f, i)
				if i > 0 {
					fmt.Fprintf(&sb, "    depends_on: {p%d: started}\n", i-1)
				}
			}
			st, tl := runTraced(b, rig, sb.String(), f, 10)
			for i := 9; i > 0; i-- {
				cur, prev := fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i-1)
				exit, term := st.at(b, cur, "exit"), st.at(b, prev, "term")
				steps = append(steps, term.Sub(exit))
				traceStop(seg, tl, cur, prev, exit, term)
			}
		}
		b.ReportMetric(float64(median(steps).Nanoseconds())/1e6, "p50-ms/step")
		seg.report(b)
	})
	b.Run("fanin200", func(b *testing.B) {
		rig := newRealRig(b)
		var steps, floors []time.Duration
		seg := segments{}
		for b.Loop() {
			f := filepath.Join(b.TempDir(), "stamps")
			var sb strings.Builder
			fmt.Fprintf(&sb, "shutdown_timeout: 30s\nprocesses:\n  root:\n    command: [%q, %q, root, none]\n", child, f)
			for i := range 200 {
				fmt.Fprintf(&sb, "  d%03d:\n    command: [%q, %q, d%03d, none]\n    depends_on: {root: started}\n", i, child, f, i)
			}
			st, tl := runTraced(b, rig, sb.String(), f, 201)
			last, lastName := time.Time{}, ""
			for i := range 200 {
				name := fmt.Sprintf("d%03d", i)
				if e := st.at(b, name, "exit"); e.After(last) {
					last, lastName = e, name
				}
			}
			term := st.at(b, "root", "term")
			steps = append(steps, term.Sub(last))
			traceStop(seg, tl, lastName, "root", last, term)
			// The last exit the loop heard of, whichever child it was:
			// the step waits for all 200.
			var lastHook time.Time
			for i := range 200 {
				if h, ok := tl.get(fmt.Sprintf("d%03d exithook", i)); ok && h.After(lastHook) {
					lastHook = h
				}
			}
			if sig, ok := tl.get("root sigterm"); ok && !lastHook.IsZero() {
				seg.add("trace-lastexit>anyhook-ms", lastHook.Sub(last))
				seg.add("trace-anyhook>sigterm-ms", sig.Sub(lastHook))
			}
			floors = append(floors, shellFanIn(b, rig, child, filepath.Join(b.TempDir(), "floor"), 200))
		}
		b.ReportMetric(float64(median(steps).Nanoseconds())/1e6, "p50-ms/step")
		b.ReportMetric(float64(median(floors).Nanoseconds())/1e6, "floor-ms/step")
		seg.report(b)
	})
}

// shellFanIn is the fan-in step's floor: one sh starts a root and n
// dependents, sends the n SIGTERM once all have exec'd, waits for them
// (wait4 each) and then sends the root SIGTERM. It returns the time from the
// last dependent's exit to the root's SIGTERM receipt, by the children's
// clocks: what the kernel and a minimal waiter need for n exits at once.
func shellFanIn(b *testing.B, rig *realRig, child, f string, n int) time.Duration {
	b.Helper()
	script := fmt.Sprintf(`%[1]q %[2]q root none & root=$!
pids=; i=0
while [ $i -lt %[3]d ]; do %[1]q %[2]q d$i none & pids="$pids $!"; i=$((i+1)); done
while [ "$(wc -l < %[2]q)" -lt %[4]d ]; do sleep 0.01; done
kill -TERM $pids; wait $pids; kill -TERM $root; wait $root`, child, f, n, n+1)
	c, err := proc.Spawn(rig.reaper, proc.Spec{Argv: []string{"/bin/sh", "-c", script}})
	if err != nil {
		b.Fatal(err)
	}
	<-c.Done()
	st := readStamps(b, f)
	var last time.Time
	for i := range n {
		if e := st.at(b, fmt.Sprintf("d%d", i), "exit"); e.After(last) {
			last = e
		}
	}
	return st.at(b, "root", "term").Sub(last)
}

func traceStop(seg segments, tl *traceLauncher, cur, prev string, exit, term time.Time) {
	reaped, ok1 := tl.get(cur + " reaped")
	hook, ok2 := tl.get(cur + " exithook")
	sig, ok3 := tl.get(prev + " sigterm")
	if !ok1 || !ok2 || !ok3 {
		return
	}
	seg.add("trace-exit>reaped-ms", reaped.Sub(exit))
	seg.add("trace-reaped>hook-ms", hook.Sub(reaped))
	seg.add("trace-hook>sigterm-ms", sig.Sub(hook))
	seg.add("trace-sigterm>term-ms", term.Sub(sig))
}

// BenchmarkEffectStart: N independent children; the time from just before
// Run until the last child has exec'd (its own stamp), against a shell loop
// that starts the same N children in the background, in the same
// iteration. Reported: start-ms, floor-ms (shell loop) and x-floor.
func BenchmarkEffectStart(b *testing.B) {
	child := stampChildPath(b)
	sizes := []int{200, 1000}
	if os.Getenv("PODVISOR_BENCH_5000") != "" {
		sizes = append(sizes, 5000) // long: about a minute per iteration
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rig := newRealRig(b)
			var starts, floors []time.Duration
			for b.Loop() {
				dir := b.TempDir()
				floors = append(floors, shellLoopStart(b, rig, child, filepath.Join(dir, "floor"), n))

				f := filepath.Join(dir, "stamps")
				var sb strings.Builder
				sb.WriteString("shutdown_timeout: 30s\nprocesses:\n")
				for i := range n {
					fmt.Fprintf(&sb, "  s%04d: {command: [%q, %q, s%04d, none]}\n", i, child, f, i)
				}
				sup := rig.supervisor(b, sb.String())
				sigs := make(chan os.Signal, 1)
				done := make(chan Outcome, 1)
				t0 := time.Now()
				go func() { done <- sup.Run(context.Background(), sigs) }()
				waitLines(b, f, n, 60*time.Second)
				starts = append(starts, lastExec(b, f).Sub(t0))
				sigs <- syscall.SIGTERM
				<-done
			}
			s, fl := median(starts), median(floors)
			b.ReportMetric(ms(s), "start-ms")
			b.ReportMetric(ms(fl), "floor-ms")
			b.ReportMetric(float64(s)/float64(fl), "x-floor")
		})
	}
}

// shellLoopStart runs `CHILD ... &` n times from one sh and returns the time
// from just before the shell's spawn to the last child's exec stamp.
func shellLoopStart(b *testing.B, rig *realRig, child, f string, n int) time.Duration {
	b.Helper()
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do %q %q s$i none & i=$((i+1)); done; wait`, n, child, f)
	t0 := time.Now()
	c, err := proc.Spawn(rig.reaper, proc.Spec{Argv: []string{"/bin/sh", "-c", script}})
	if err != nil {
		b.Fatal(err)
	}
	waitLines(b, f, n, 60*time.Second)
	d := lastExec(b, f).Sub(t0)
	_ = c.Signal(syscall.SIGTERM)
	<-c.Done()
	// The children stay in the shell's group; wait until they are all gone.
	for deadline := time.Now().Add(30 * time.Second); c.GroupAlive() && time.Now().Before(deadline); {
		_ = c.Signal(syscall.SIGTERM)
		time.Sleep(5 * time.Millisecond)
	}
	return d
}

func lastExec(b *testing.B, f string) time.Time {
	b.Helper()
	var last time.Time
	for k, t := range readStamps(b, f) {
		if strings.HasSuffix(k, " exec") && t.After(last) {
			last = t
		}
	}
	return last
}

// BenchmarkLaunchToExec: one launch.Launcher.Launch of stampchild with each
// readiness kind's set-up (none, log matcher, notify socket, notify pipe).
// Reported: launch-ms (Launch's own duration: pipes, notify set-up, spawner
// hand-off, fork/exec until the exec succeeded) and exec-ms (from the call
// to the child's own exec stamp).
func BenchmarkLaunchToExec(b *testing.B) {
	child := stampChildPath(b)
	for _, kind := range []string{"none", "log", "systemd", "fd"} {
		b.Run(kind, func(b *testing.B) {
			rig := newRealRig(b)
			l := &launch.Launcher{Reaper: rig.reaper, Sink: rig.sink, BaseEnv: os.Environ(), RuntimeDir: rig.runtimeDir, Log: slog.New(slog.DiscardHandler)}
			yml := effectChainYAML(child, "FILE", kind, nil)
			if kind == "none" {
				yml = effectChainYAML(child, "FILE", "started", nil)
			}
			var launches, execs []time.Duration
			for i := 0; b.Loop(); i++ {
				f := filepath.Join(b.TempDir(), "stamps")
				cfg := parseB(b, strings.ReplaceAll(yml, "FILE", f))
				p := cfg.Processes["h0"]
				exited := make(chan struct{})
				t0 := time.Now()
				c, err := l.Launch(p, uint64(i), Hooks{Exited: func(proc.Exit) { close(exited) }, Ready: func(string) {}, Status: func(string) {}})
				t1 := time.Now()
				if err != nil {
					b.Fatal(err)
				}
				waitLines(b, f, 1, 10*time.Second)
				launches = append(launches, t1.Sub(t0))
				execs = append(execs, readStamps(b, f).at(b, "h0", "exec").Sub(t0))
				_ = c.Signal(syscall.SIGKILL)
				<-exited
			}
			b.ReportMetric(ms(median(launches)), "launch-ms")
			b.ReportMetric(ms(median(execs)), "exec-ms")
		})
	}
}
