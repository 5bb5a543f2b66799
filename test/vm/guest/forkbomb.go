package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// forkBomb (docs/reliability.md, D7): podvisor's own cgroup has pids.max
// 150; a fork bomb in a process asking for 100000 is clamped to 86
// (podvisor's reserve of 64), refused there again and again, while /livez
// answers within 1 s each time (plus the guest's own stalls, measured on
// the VM's unbombed podvisor), and SIGTERM ends everything within
// shutdown_timeout.
func forkBomb(r *reporter) {
	start := time.Now()
	dir, err := newCgroup("bomb")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "pids.max"), []byte("150"), 0)
	}
	if err != nil {
		r.result("forkbomb", start, "", err)
		return
	}
	const mark = "900006"
	run, err := startRun("bomb", dir, 8103, `shutdown_timeout: 10s
processes:
  bomb:
    command: [/bin/guest, bomb, '`+mark+`']
    resources: {pids: {max: 100000}}
  steady:
    command: [sleep, '900007']
`)
	if err != nil {
		r.result("forkbomb", start, "", err)
		return
	}
	bombCg := filepath.Join(dir, "p-bomb.1")
	var refused int64
	hit := eventually(120*time.Second, func() bool {
		refused, _ = key(filepath.Join(bombCg, "pids.events"), "max")
		return refused > 0
	})
	var errs []error
	if !hit {
		errs = append(errs, fmt.Errorf("the bomb's pids limit was never hit: pids.events %q, pids.current %s", read(filepath.Join(bombCg, "pids.events")), read(filepath.Join(bombCg, "pids.current"))))
	}
	errs = append(errs, want(filepath.Join(bombCg, "pids.max"), "86"))
	current := read(filepath.Join(bombCg, "pids.current"))
	// Within 1 s, plus twice what the VM's own podvisor (no bomb) takes
	// to answer just before: the floor, as emulation on a loaded host
	// stalls the whole guest now and then.
	var slowest, floor time.Duration
	for range 5 {
		t := time.Now()
		_, _, _ = get(pid1Port, "/livez")
		f := time.Since(t)
		floor = max(floor, f)
		t = time.Now()
		code, _, err := run.get("/livez")
		d := time.Since(t)
		slowest = max(slowest, d)
		if code != 200 || d > time.Second+2*f {
			errs = append(errs, fmt.Errorf("/livez during the bomb: %d in %v (%v), want 200 within 1 s + 2 × %v (the unbombed podvisor's)", code, d, err, f))
		}
	}
	refusedAfter, _ := key(filepath.Join(bombCg, "pids.events"), "max")
	took, err := run.stop(30 * time.Second)
	if err != nil {
		errs = append(errs, fmt.Errorf("podvisor's exit after SIGTERM: %v", err))
	}
	if took > 12*time.Second {
		errs = append(errs, fmt.Errorf("teardown took %v, past shutdown_timeout 10s", took))
	}
	if !eventually(10*time.Second, func() bool { return len(pidsWith(mark)) == 0 }) {
		errs = append(errs, fmt.Errorf("%d bomb processes outlived podvisor", len(pidsWith(mark))))
	}
	errs = append(errs, run.clean())
	if len(errs) > 0 && errors.Join(errs...) != nil {
		errs = append(errs, fmt.Errorf("podvisor said:\n%s", run.out))
	}
	r.result("forkbomb", start, fmt.Sprintf("the bomb's forks were refused %d times at pids.max 86 (podvisor's cgroup: 150 less its reserve of 64; bomb pids.current %s); still refused while /livez answered (%d times by then); /livez 5 times 200, the slowest in %d ms (the unbombed podvisor's slowest %d ms); SIGTERM to exit in %.2f s (shutdown_timeout 10s)",
		refused, current, refusedAfter, slowest.Milliseconds(), floor.Milliseconds(), took.Seconds()), errors.Join(errs...))
}
