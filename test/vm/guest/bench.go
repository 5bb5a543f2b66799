package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchLimits are the resources of a process in the runs with limits
// (docs/BENCHMARKS.md's v1 figures use the same).
const benchLimits = "{memory: {max: 64Mi}, cpu: {max: 500m}, pids: {max: 100}}"

// bench times the start of N `sleep` processes (N from vmbench= on the
// kernel's command line, else 50), from podvisor's spawn to its first
// /readyz 200, without and with resources, interleaved, twice each, and
// reports the cost of a cgroup per start against the same run without
// limits. It fails only when a run does not come up or its cgroups are
// not what the config asks for (N of them with limits; none, not even
// podvisor's leaf, without).
func bench(r *reporter) {
	start := time.Now()
	n := 50
	if x, err := strconv.Atoi(cmdline("vmbench")); err == nil && x > 0 {
		n = x
	}
	took := map[bool][]time.Duration{}
	var errs []error
	for i, limited := range []bool{false, true, false, true} {
		d, err := benchRun(i, n, limited)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		took[limited] = append(took[limited], d)
		fmt.Fprintf(r.out, "VMBENCH n=%d limits=%t round=%d start_to_ready_ms=%d per_start_ms=%.2f\n", n, limited, i/2+1, d.Milliseconds(), float64(d.Microseconds())/1000/float64(n))
	}
	if err := errors.Join(errs...); err != nil {
		r.result("bench", start, "", err)
		return
	}
	without, with := median(took[false]), median(took[true])
	detail := fmt.Sprintf("%d starts to /readyz: without limits %v (%.2f ms each), with %v (%.2f ms each); median ratio %.2f, %.2f ms more per start",
		n, ms(took[false]), per(without, n), ms(took[true]), per(with, n), float64(with)/float64(without), per(with-without, n))
	fmt.Fprintf(r.out, "VMBENCH summary %s\n", detail)
	r.result("bench", start, detail, nil)
}

// benchRun starts one podvisor with n processes (limited: each with
// benchLimits) and returns the time from its spawn to /readyz 200.
func benchRun(i, n int, limited bool) (time.Duration, error) {
	dir, err := newCgroup("bench" + strconv.Itoa(i))
	if err != nil {
		return 0, err
	}
	var cfg strings.Builder
	cfg.WriteString("shutdown_timeout: 60s\nprocesses:\n")
	for j := range n {
		fmt.Fprintf(&cfg, "  p%d:\n    command: [sleep, '900100']\n    log: {stdout: off, stderr: off}\n", j)
		if limited {
			cfg.WriteString("    resources: " + benchLimits + "\n")
		}
	}
	t0 := time.Now()
	run, err := launch("bench"+strconv.Itoa(i), dir, 8105+i, cfg.String())
	if err != nil {
		return 0, err
	}
	ready := eventually(300*time.Second, func() bool {
		code, _, _ := run.get("/readyz")
		return code == 200 || run.exited()
	}) && !run.exited()
	d := time.Since(t0)
	groups, _ := filepath.Glob(filepath.Join(dir, "p-*"))
	leaf, _ := filepath.Glob(filepath.Join(dir, "podvisor"))
	var errs []error
	switch {
	case !ready:
		errs = append(errs, fmt.Errorf("bench run %d (limits %t) never ready: %v\n%s", i, limited, run.err, run.out))
	case limited && len(groups) != n:
		errs = append(errs, fmt.Errorf("bench run %d: %d process cgroups, want %d", i, len(groups), n))
	case !limited && len(groups)+len(leaf) > 0:
		errs = append(errs, fmt.Errorf("bench run %d without limits made cgroups: %v %v", i, leaf, groups))
	}
	// The exit code is not what is measured (1 when something needed
	// SIGKILL): only that it ends.
	if _, err := run.stop(120 * time.Second); err != nil && !errors.As(err, new(*exec.ExitError)) {
		errs = append(errs, err)
	} else if err != nil {
		fmt.Fprintf(os.Stdout, "bench run %d: podvisor's exit: %v\n%s", i, err, run.out)
	}
	errs = append(errs, run.clean())
	return d, errors.Join(errs...)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func per(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }

// ms lists durations in milliseconds.
func ms(ds []time.Duration) string {
	var out []string
	for _, d := range ds {
		out = append(out, strconv.FormatInt(d.Milliseconds(), 10)+" ms")
	}
	return "[" + strings.Join(out, ", ") + "]"
}
