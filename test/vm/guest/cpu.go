package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuLeafAccounting runs one podvisor in a cgroup that already holds a
// process (as a container's cgroup may), with a CPU-bound process under
// cpu.max 200m and one whose memory is 20 MiB of tmpfs pages, and reports:
//
//   - leaf: podvisor moved itself and the process beside it into its leaf
//     (no internal processes), enabled cpu memory pids in
//     cgroup.subtree_control and put each process in p-NAME.1 with its
//     limits;
//   - cpu: the spinner used about 20% of a CPU over 5 s of the guest's
//     clock, from cpu.stat's usage_usec (tolerance: at most 25% plus one
//     100 ms period over the window, more than 1%), and was throttled;
//   - accounting: /status's cpu_seconds and memory_bytes are the cgroup's
//     (memory.current counts the tmpfs pages no /proc walk sees).
func cpuLeafAccounting(r *reporter) {
	start := time.Now()
	names := []string{"leaf", "cpu", "accounting"}
	fail := func(err error) {
		for _, n := range names {
			r.result(n, start, "", err)
		}
	}
	dir, err := newCgroup("cpu")
	if err != nil {
		fail(err)
		return
	}
	const preMark, memMark = "900002", "900003"
	pre := exec.Command("sleep", preMark)
	if err := startIn(dir, pre); err != nil {
		fail(err)
		return
	}
	defer func() {
		_ = pre.Process.Kill()
		_ = pre.Wait()
	}()
	fill := filepath.Join(work, "acct.fill")
	defer os.Remove(fill)
	run, err := startRun("cpu", dir, 8101, `processes:
  spin:
    command: "while :; do :; done"
    resources: {cpu: {max: 200m}}
  mem:
    command: "dd if=/dev/zero of=`+fill+` bs=1M count=20 2>/dev/null && exec sleep `+memMark+`"
    resources: {memory: {max: 64Mi}}
`)
	if err != nil {
		fail(err)
		return
	}
	defer func() {
		_, _ = run.stop(30 * time.Second)
		_ = pre.Process.Kill()
		_ = pre.Wait()
		if err := run.clean(); err != nil {
			r.result("cpu-clean", start, "", err)
		}
	}()
	pids, err := run.running("spin", "mem")
	if err != nil {
		fail(err)
		return
	}
	memPid, err := onePid(memMark) // the tmpfs file is written
	if err != nil {
		fail(fmt.Errorf("%v; podvisor said:\n%s", err, run.out))
		return
	}

	pv := run.cmd.Process.Pid
	spinCg, memCg := filepath.Join(dir, "p-spin.1"), filepath.Join(dir, "p-mem.1")
	r.result("leaf", start, fmt.Sprintf("podvisor %d and the process beside it (%d) in /vm-cpu/podvisor, /vm-cpu holds none; subtree_control %q; spin in p-spin.1 (cpu.max %s), mem in p-mem.1 (memory.max %s, memory.oom.group %s)",
		pv, pre.Process.Pid, read(filepath.Join(dir, "cgroup.subtree_control")), read(filepath.Join(spinCg, "cpu.max")), read(filepath.Join(memCg, "memory.max")), read(filepath.Join(memCg, "memory.oom.group"))),
		errors.Join(
			inCgroup(pv, "/vm-cpu/podvisor"),
			inCgroup(pre.Process.Pid, "/vm-cpu/podvisor"),
			want(filepath.Join(dir, "cgroup.procs"), ""),
			hasAll(filepath.Join(dir, "cgroup.subtree_control"), "cpu", "memory", "pids"),
			inCgroup(pids["spin"], "/vm-cpu/p-spin.1"),
			inCgroup(memPid, "/vm-cpu/p-mem.1"),
			want(filepath.Join(spinCg, "cpu.max"), "20000 100000"),
			want(filepath.Join(memCg, "memory.max"), "67108864"),
			want(filepath.Join(memCg, "memory.oom.group"), "1"),
		))

	start = time.Now()
	detail, err := cpuShare(filepath.Join(spinCg, "cpu.stat"))
	r.result("cpu", start, detail, err)

	start = time.Now()
	detail, err = accounting(run, filepath.Join(spinCg, "cpu.stat"), filepath.Join(memCg, "memory.current"), memPid)
	r.result("accounting", start, detail, err)
}

// cpuShare measures the share of a CPU a cgroup used over 5 s.
func cpuShare(cpuStat string) (string, error) {
	if !eventually(30*time.Second, func() bool { u, _ := key(cpuStat, "usage_usec"); return u > 0 }) {
		return "", fmt.Errorf("spin never used CPU: %s", read(cpuStat))
	}
	u0, err1 := key(cpuStat, "usage_usec")
	th0, err2 := key(cpuStat, "nr_throttled")
	t0 := time.Now()
	<-time.After(5 * time.Second) // the measurement window, not a wait for anything
	u1, err3 := key(cpuStat, "usage_usec")
	th1, err4 := key(cpuStat, "nr_throttled")
	wall := time.Since(t0).Seconds()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return "", err
	}
	used := float64(u1-u0) / 1e6
	share := used / wall
	detail := fmt.Sprintf("spin used %.3f s of CPU in %.3f s (%.1f%%; cpu.max 20%%, allowed 1%%..%.1f%%), throttled %d times",
		used, wall, 100*share, 100*(0.25+0.1/wall), th1-th0)
	if share > 0.25+0.1/wall || share <= 0.01 || th1 <= th0 {
		return "", errors.New(detail)
	}
	return detail, nil
}

// accounting compares /status with the cgroup files: the spinner's CPU
// seconds lie between two readings of cpu.stat (less what /status's one-
// second cache may hide, at 20% of a CPU), and mem's memory_bytes is its
// memory.current, which holds 20 MiB of tmpfs pages its RSS does not.
func accounting(run *run, cpuStat, memCurrent string, memPid int) (string, error) {
	a, err1 := key(cpuStat, "usage_usec")
	spin, err2 := process(run.port, "spin")
	b, err3 := key(cpuStat, "usage_usec")
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", err
	}
	var errs []error
	if spin.Resources == nil {
		return "", fmt.Errorf("/status: no resources for spin: %+v", spin)
	}
	cpu := spin.Resources.CPUSeconds
	if lo, hi := float64(a)/1e6-0.35, float64(b)/1e6+0.001; cpu < lo || cpu > hi {
		errs = append(errs, fmt.Errorf("/status: spin's cpu_seconds %.3f, cpu.stat says %.3f..%.3f", cpu, float64(a)/1e6, float64(b)/1e6))
	}
	var mem uint64
	eventually(10*time.Second, func() bool {
		p, err := process(run.port, "mem")
		if err == nil && p.Resources != nil {
			mem = p.Resources.MemoryBytes
		}
		return mem >= 20<<20
	})
	cur, err := strconv.ParseInt(read(memCurrent), 10, 64)
	if err != nil {
		return "", err
	}
	rss := vmRSS(memPid)
	if mem < 20<<20 || float64(mem) < 0.8*float64(cur) || float64(mem) > 1.25*float64(cur) {
		errs = append(errs, fmt.Errorf("/status: mem's memory_bytes %d, memory.current %d (want about equal, at least 20 MiB)", mem, cur))
	}
	return fmt.Sprintf("spin cpu_seconds %.3f (cpu.stat %.3f..%.3f); mem memory_bytes %.1f MiB, memory.current %.1f MiB, its RSS %.1f MiB",
		cpu, float64(a)/1e6, float64(b)/1e6, float64(mem)/(1<<20), float64(cur)/(1<<20), float64(rss)/(1<<20)), errors.Join(errs...)
}

// vmRSS is a process's resident set in bytes.
func vmRSS(pid int) int64 {
	for line := range strings.Lines(read(fmt.Sprintf("/proc/%d/status", pid))) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
