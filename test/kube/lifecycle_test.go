package kube

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The cases of the kubelet's node e2e suite "Containers Lifecycle"
// (kubernetes test/e2e_node/container_lifecycle_test.go, v1.35 line) that
// need no image, node or kubelet restart, on manifests of our own
// (testdata/lifecycle-*.yaml), in both modes.

// eventLog is the event file as written: its lines in the order the
// processes appended them (O_APPEND: the file's order is the order of the
// writes), each "NAME EVENT" with NANOS when the line carries a time.
type eventLog struct {
	lines []string         // "NAME EVENT", in file order
	at    map[string]int64 // first NANOS of each "NAME EVENT" that has one
}

func readLog(t *testing.T, path string) eventLog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := eventLog{at: map[string]int64{}}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		ev := f[0] + " " + f[1]
		l.lines = append(l.lines, ev)
		if len(f) > 2 {
			if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				if _, seen := l.at[ev]; !seen {
					l.at[ev] = n
				}
			}
		}
	}
	return l
}

// index is the line of ev's first occurrence, or -1.
func (l eventLog) index(ev string) int {
	for i, e := range l.lines {
		if e == ev {
			return i
		}
	}
	return -1
}

// order checks that each event was written, the first of each before the
// next in the list.
func (l eventLog) order(t *testing.T, evs ...string) {
	t.Helper()
	last := -1
	for i, ev := range evs {
		n := l.index(ev)
		switch {
		case n < 0:
			t.Errorf("no event %q in %q", ev, l.lines)
			return
		case n < last:
			t.Errorf("%q came before %q; events %q", ev, evs[i-1], l.lines)
		}
		last = n
	}
}

// overlap checks that every event of starts was written before any of ends:
// things that ran at the same time, told from the order alone.
func (l eventLog) overlap(t *testing.T, starts, ends []string) {
	t.Helper()
	for _, s := range starts {
		for _, e := range ends {
			l.order(t, s, e)
		}
	}
}

// together checks that the timed events came within d of each other.
func (l eventLog) together(t *testing.T, d time.Duration, evs ...string) {
	t.Helper()
	var lo, hi int64
	for i, ev := range evs {
		n, ok := l.at[ev]
		if !ok {
			t.Errorf("no timed event %q in %q", ev, l.lines)
			return
		}
		if i == 0 || n < lo {
			lo = n
		}
		if i == 0 || n > hi {
			hi = n
		}
	}
	if time.Duration(hi-lo) > d {
		t.Errorf("%q spread over %v, want within %v", evs, time.Duration(hi-lo), d)
	}
}

// last is the NANOS of ev's last timed line.
func (l eventLog) last(t *testing.T, path, ev string) int64 {
	t.Helper()
	data, _ := os.ReadFile(path)
	var n int64
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0]+" "+f[1] == ev {
			n, _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	if n == 0 {
		t.Errorf("no timed event %q", ev)
	}
	return n
}

func playLifecycle(t *testing.T, manifest string, args []string) (*run, int, eventLog) {
	t.Helper()
	r := play(t, manifest, args...)
	code := r.wait(60 * time.Second)
	return r, code, readLog(t, r.events)
}

// "should launch the regular containers after all restartable init
// containers are started", and the init container after a sidecar: each
// sidecar is busy before its first event, and the next container still
// comes after that event.
func TestLifecycleStartGate(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r, code, l := playLifecycle(t, "lifecycle-start-gate.yaml", m.args)
			if code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l.order(t, "i1 done", "s1 started", "i2 started", "s2 started", "main started")
		})
	}
}

// "should terminate sidecars in reverse order after all main containers
// have exited"; the pod succeeded, so podvisor exits 0.
func TestLifecycleReverseTermination(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r, code, l := playLifecycle(t, "lifecycle-reverse.yaml", m.args)
			if code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l.order(t, "s1 started", "s2 started", "s3 started", "main started", "main exit",
				"s3 term", "s3 exit", "s2 term", "s2 exit", "s1 term", "s1 exit")
		})
	}
}

// "should call sidecar container PreStop hook simultaneously": in the
// kubelet's order every preStop starts when termination begins, the
// sidecars still stop in reverse order; --ordered runs each at its turn.
func TestLifecyclePreStopTogether(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r, code, l := playLifecycle(t, "lifecycle-prestop.yaml", m.args)
			if code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l.order(t, "main exit", "s3 term", "s3 exit", "s2 term", "s2 exit", "s1 term", "s1 exit")
			if m.kubelet {
				// Together: every hook (each sleeps 1 s) began before any
				// ended, and after the main container exited.
				l.overlap(t, []string{"s1 prestop", "s2 prestop", "s3 prestop"}, []string{"s1 prestopped", "s2 prestopped", "s3 prestopped"})
				l.order(t, "main exit", "s1 prestop")
				l.order(t, "main exit", "s2 prestop")
			} else {
				l.order(t, "s3 prestop", "s3 term", "s3 exit", "s2 prestop", "s2 term", "s2 exit", "s1 prestop", "s1 term")
			}
		})
	}
}

// "should terminate sidecars simultaneously if prestop doesn't exit": the
// hooks never return and the sidecars ignore SIGTERM. Once the 3 s grace is
// spent every sidecar gets SIGTERM together, and SIGKILL 2 s later
// (minimumGracePeriodInSeconds); the main container succeeded, so the pod
// did, and podvisor exits 0 although it killed the sidecars.
func TestLifecycleStuckPreStop(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-stuck-prestop.yaml", m.args...)
			code := r.wait(60 * time.Second)
			ended := time.Now().UnixNano()
			if code != 0 {
				t.Errorf("exit %d, want 0 (a killed sidecar is not the pod's failure)\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "main exit", "s2 term")
			l.order(t, "main exit", "s1 term")
			l.together(t, 500*time.Millisecond, "s1 term", "s2 term")
			if m.kubelet {
				// The hooks never return: both began when termination
				// began, before the grace period's SIGTERM.
				l.order(t, "main exit", "s1 hook", "s1 term")
				l.order(t, "main exit", "s2 hook", "s1 term")
			}
			// Termination begins after the main container's exit: at once
			// at full speed and in --ordered, at the next relist (0-1 s) at
			// a node's pace, as the kubelet notices the exit. In the
			// kubelet's order the hooks' first lines mark it.
			began := l.at["main exit"]
			if m.kubelet {
				began = min(l.at["s1 hook"], l.at["s2 hook"])
			}
			term := l.at["s1 term"]
			if d := time.Duration(term - began); d < 2500*time.Millisecond || d > 4500*time.Millisecond {
				t.Errorf("SIGTERM %v after termination began, want about the 3 s grace", d)
			}
			// The lower bound from "main exit", written before termination
			// began: a sidecar's trap may write its "term" line late (it
			// runs after the shell's current sleep), but podvisor cannot end
			// before the 3 s grace and the 2 s minimum after it have passed.
			if d := time.Duration(ended - l.at["main exit"]); d < 5*time.Second {
				t.Errorf("podvisor ended %v after termination began, want at least the 3 s grace and the 2 s minimum", d)
			}
			if h := l.last(t, r.events, "s2 hook"); time.Duration(h-began) > 4*time.Second {
				t.Errorf("s2's preStop still ran %v after termination began", time.Duration(h-began))
			}
		})
	}
}

// A startupProbe on a job's container that never passes: the container's
// preStop runs, then it is stopped, and the run fails (exit 1: a missed
// start has no exit code of its own), in both modes.
func TestLifecycleStartupProbeOfAJob(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r, code, l := playLifecycle(t, "lifecycle-startup-job.yaml", m.args)
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, r.stdout)
			}
			l.order(t, "main started", "main prestop", "main term")
		})
	}
}

// No probe of a sidecar once termination has begun: not during a regular
// container's preStop, nor after.
func TestLifecycleNoSidecarProbesInTermination(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := play(t, "lifecycle-probe-termination.yaml", m.args...)
			r.waitEvents(30*time.Second, "side probe", "main started")
			r.signal(syscall.SIGTERM)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit %d, want 0\n%s", code, r.stdout)
			}
			l := readLog(t, r.events)
			l.order(t, "main prestop", "main term", "side term")
			// One attempt may have been under way when termination began; a
			// prober still running would add two more during the 2 s preStop.
			n := 0
			for _, ev := range l.lines[l.index("main prestop")+1:] {
				if ev == "side probe" {
					n++
				}
			}
			if n > 1 {
				t.Errorf("the sidecar was probed %d times after termination began: %q", n, l.lines)
			}
		})
	}
}
