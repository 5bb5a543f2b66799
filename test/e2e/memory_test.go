package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// forcedGC is the Go runtime's GODEBUG=gctrace=1 line of a forced collection
// (debug.FreeOSMemory), with its time since the process started.
var forcedGC = regexp.MustCompile(`(?m)^gc \d+ @([0-9.]+)s .*\(forced\)$`)

// The start-up's garbage goes back to the OS (a forced GC: 1.4 MB of RSS
// with 200 processes) a second after every process is first ready, not
// among the first spawns, where its stop-the-world delayed them; a run that
// ends within that second never pays for it.
func TestStartGarbageFreedAfterTheStart(t *testing.T) {
	t.Parallel()
	gctrace := withEnv("GODEBUG=gctrace=1")
	r := startPodvisor(t, "processes:\n  j: {type: job, command: [sleep, '0.1']}\n", gctrace)
	code, _ := r.Wait(20 * time.Second)
	wantCode(t, r, code, 0)
	if m := forcedGC.FindString(r.Stderr.String()); m != "" {
		t.Errorf("a run of a 0.1 s job forced a GC: %s", m)
	}

	r = startPodvisor(t, "processes:\n  s: {command: [sleep, '60']}\n", gctrace)
	eventually(t, 20*time.Second, func() bool { return forcedGC.MatchString(r.Stderr.String()) },
		"no forced GC after the start; stderr:\n%s", r.Stderr.String())
	at, _ := strconv.ParseFloat(forcedGC.FindStringSubmatch(r.Stderr.String())[1], 64)
	if at < 0.9 {
		t.Errorf("forced GC %.3f s after podvisor's start, want about a second after all were ready:\n%s", at, r.Stderr.String())
	}
	if n := strings.Count(r.Stderr.String(), "(forced)"); n != 1 {
		t.Errorf("%d forced GCs, want 1", n)
	}
	r.Signal(syscall.SIGTERM)
	code, _ = r.Wait(20 * time.Second)
	wantCode(t, r, code, 0)
}
