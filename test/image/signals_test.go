package image

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// stubborn ignores SIGTERM (the ignored disposition survives exec, so its
// sleep ignores it too); podvisor must SIGKILL it after stop.timeout.
const stubbornConfig = `shutdown_timeout: 30s
processes:
  stubborn:
    command: trap '' TERM; echo up; while :; do sleep 1; done
    stop: {timeout: %s}
`

func runStubborn(t *testing.T, stopTimeout string) *container {
	t.Helper()
	dir := configDir(t, map[string]string{"procs.yaml": strings.Replace(stubbornConfig, "%s", stopTimeout, 1)})
	c := run(t, "stubborn", "-v", dir+":/etc/podvisor:ro", baseImage)
	c.waitLog(30*time.Second, "stubborn | up")
	return c
}

// TestStopIgnoredSIGTERM: `podman stop -t 10` on a child that ignores
// SIGTERM ends after the child's stop.timeout (3 s), not the engine's 10 s,
// and podvisor exits 1 because it had to SIGKILL something.
func TestStopIgnoredSIGTERM(t *testing.T) {
	needImages(t)
	t.Parallel()
	c := runStubborn(t, "3s")
	start := time.Now()
	must(t, "stop", "-t", "10", c.name)
	took := time.Since(start)
	code := c.waitExit(10 * time.Second)
	t.Logf("podman stop -t 10 with stop.timeout 3s: %v, exit code %d", took.Round(10*time.Millisecond), code)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (podvisor had to SIGKILL; 137 would mean podman killed podvisor)", code)
	}
	if took < 3*time.Second {
		t.Errorf("stopped after %v, before the 3s stop.timeout", took)
	}
	logIndex(t, c.logs(), "teardown started")
}

// TestDoubleSIGTERM: a second SIGTERM during the teardown kills at once,
// long before the 60 s stop.timeout.
func TestDoubleSIGTERM(t *testing.T) {
	needImages(t)
	t.Parallel()
	c := runStubborn(t, "60s")
	must(t, "kill", "-s", "TERM", c.name)
	c.waitLog(20*time.Second, "teardown started")
	if !c.running() {
		t.Fatal("exited after the first SIGTERM; the child ignores it and has a 60s stop.timeout")
	}
	start := time.Now()
	must(t, "kill", "-s", "TERM", c.name)
	code := c.waitExit(20 * time.Second)
	t.Logf("second SIGTERM -> exited: %v, exit code %d", time.Since(start).Round(10*time.Millisecond), code)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (teardown had to SIGKILL)", code)
	}
}

// procStat is one line of /proc/PID/stat: pid, command, state, parent.
type procStat struct {
	pid, comm, state, ppid string
}

// procs lists the container's processes from /proc/*/stat.
func procs(t *testing.T, c *container) []procStat {
	t.Helper()
	out, _ := c.exec("sh", "-c", "cat /proc/[0-9]*/stat 2>/dev/null")
	var ps []procStat
	for _, line := range strings.Split(out, "\n") {
		open, close := strings.Index(line, " ("), strings.LastIndex(line, ") ")
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(line[close+2:])
		if len(f) < 2 {
			continue
		}
		ps = append(ps, procStat{pid: line[:open], comm: line[open+2 : close], state: f[0], ppid: f[1]})
	}
	return ps
}

// TestOrphansReaped: a child leaves 1,000 orphans, reparented to podvisor
// (PID 1); when they exit together none stays a zombie.
func TestOrphansReaped(t *testing.T) {
	needImages(t)
	t.Parallel()
	// Each `sh -c '... &'` exits at once, orphaning its cat, which blocks
	// opening the FIFO for reading until the test writes to it.
	dir := configDir(t, map[string]string{"procs.yaml": `processes:
  orphaner:
    command: |
      mkfifo /tmp/gate
      i=0
      while [ $i -lt 1000 ]; do sh -c 'cat /tmp/gate >/dev/null &'; i=$((i+1)); done
      echo spawned
      exec sleep infinity
`})
	c := run(t, "orphans", "-v", dir+":/etc/podvisor:ro", baseImage)
	c.waitLog(120*time.Second, "orphaner | spawned")
	orphans := func() (n, zombies int) {
		for _, p := range procs(t, c) {
			if p.comm == "cat" && p.ppid == "1" {
				n++
			}
			if p.state == "Z" {
				zombies++
			}
		}
		return
	}
	var n int
	eventually(t, 30*time.Second, func() bool { n, _ = orphans(); return n == 1000 },
		func() string { return "orphaned cats whose parent is PID 1: " + itoa(n) + ", want 1000" })
	if out, code := c.exec("sh", "-c", "echo go > /tmp/gate"); code != 0 {
		t.Fatalf("releasing the orphans: %d %s", code, out)
	}
	start := time.Now()
	var left, zombies int
	eventually(t, 20*time.Second, func() bool { left, zombies = orphans(); return left == 0 && zombies == 0 },
		func() string { return "orphans left: " + itoa(left) + ", zombies: " + itoa(zombies) })
	t.Logf("1000 orphans exited and reaped within %v of their release", time.Since(start).Round(10*time.Millisecond))
	// And a second later, still none.
	time.Sleep(time.Second)
	if _, zombies = orphans(); zombies != 0 {
		t.Errorf("%d zombies 1s after the orphans exited", zombies)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
