package kube

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// At a node's pace (the default), containers shaped as the kubelet's node
// e2e cases write them (their first line logs the start, with nothing
// before it) are seen in the node's order: init containers and sidecars
// start serially, each after the previous one's first line, and a sidecar's
// port (a file it makes 100 ms after its first line) is open when the next
// container starts ("inits and sidecars start serially"). The sidecars then
// stop after the main container, in reverse order. At --pace fast the next
// container finds the port closed (checked by hand: this test fails with
// --pace fast), so it is for the default only.
func TestLifecyclePaceFirstLines(t *testing.T) {
	r, code, l := playLifecycle(t, "lifecycle-pace.yaml", nil)
	if code != 0 {
		t.Errorf("exit %d, want 0\n%s\n%s", code, r.stdout, r.stderr)
	}
	l.order(t, "i1 started", "s1 started", "i2 started", "s2 started", "main started", "main exit", "s2 term", "s1 term")
	for _, ev := range []string{"i2 found-s1", "main found-s2"} {
		if l.index(ev) < 0 {
			t.Errorf("no %q: the next container started before the sidecar's port was open; events %q", ev, l.lines)
		}
	}
}

// paceBench is a sidecar and the container after it, each logging its
// first line with its own clock.
const paceBench = `apiVersion: v1
kind: Pod
metadata: {name: pace-bench}
spec:
  restartPolicy: Never
  initContainers:
  - name: i1
    command: [sh, -c, 'echo "i1 started $(date +%s%N)" >> "$E2E_EVENTS"']
  - name: s1
    restartPolicy: Always
    command: [sh, -c, 'echo "s1 started $(date +%s%N)" >> "$E2E_EVENTS"; trap "exit 0" TERM; while :; do sleep 0.1; done']
  containers:
  - name: main
    command: [sh, -c, 'echo "main started $(date +%s%N)" >> "$E2E_EVENTS"']
`

// BenchmarkPaceLag measures, on the containers' own clocks, the lag from a
// sidecar's first line to the next container's first line, at a node's
// pace and at full speed (the floor), and the same from the init
// container's line to the sidecar's.
//
//	go test -run '^$' -bench PaceLag -benchtime 10x ./test/kube/
func BenchmarkPaceLag(b *testing.B) {
	manifest := filepath.Join(b.TempDir(), "pace.yaml")
	if err := os.WriteFile(manifest, []byte(paceBench), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, pace := range []string{"node", "fast"} {
		b.Run(pace, func(b *testing.B) {
			var sideLag, initLag []time.Duration
			for range b.N {
				r := start(b, "kube", "play", "--listen", "off", "--pace", pace, manifest)
				if code := r.wait(time.Minute); code != 0 {
					b.Fatalf("exit %d\n%s", code, r.stderr)
				}
				evs := r.readEvents()
				sideLag = append(sideLag, time.Duration(evs["main started"]-evs["s1 started"]))
				initLag = append(initLag, time.Duration(evs["s1 started"]-evs["i1 started"]))
			}
			report(b, "sidecar-to-next", sideLag)
			report(b, "init-to-sidecar", initLag)
		})
	}
}

// report adds the mean, least and most of ds, in ms, to the benchmark.
func report(b *testing.B, what string, ds []time.Duration) {
	var sum, lo, hi time.Duration
	for i, d := range ds {
		sum += d
		if i == 0 || d < lo {
			lo = d
		}
		if d > hi {
			hi = d
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum/time.Duration(len(ds))), what+"-mean-ms")
	b.ReportMetric(ms(lo), what+"-min-ms")
	b.ReportMetric(ms(hi), what+"-max-ms")
}
