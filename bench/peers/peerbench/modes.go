package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lifecycle measures, for one supervisor with n workload processes:
//   - startup_ms: from just before the supervisor is started until n
//     processes run the marker command line (seen in /proc, so the same
//     observation for every supervisor, whatever it calls "running");
//   - rss_kib, pss_kib, procs: memory of the supervisor's own processes
//     (its descendant tree minus the marker processes) after -settle;
//   - teardown_ms: from SIGTERM to the supervisor until it has exited and
//     no marker process is left alive.
func lifecycle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("lifecycle", stderr)
	n := fs.Int("n", 200, "number of workload processes to wait for")
	mark := fs.String("marker", "", "command line of every workload process, e.g. \"sleep 99990001\"")
	settle := fs.Duration("settle", time.Second, "pause between startup and the memory sample")
	timeout := fs.Duration("timeout", 2*time.Minute, "limit for startup and for teardown")
	out := fs.String("out", "", "file for the supervisor's stdout and stderr (default /dev/null)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *mark == "" {
		return errors.New("-marker is required")
	}
	m := newMarker(*mark)
	if err := checkClean(m, *mark); err != nil {
		return err
	}
	t0 := time.Now()
	c, err := start(fs.Args(), *out)
	if err != nil {
		return err
	}
	defer killMarked(m)
	defer c.kill()
	err = poll(ctx, *timeout, 10*time.Millisecond, "wait for workload", func() (bool, error) {
		if c.exited() {
			return false, c.early()
		}
		k, err := m.count()
		return k >= *n, err
	})
	if err != nil {
		return err
	}
	startup := time.Since(t0)

	// Not a synchronisation: the supervisor may still be settling (logging
	// the starts, marking processes running) and memory is sampled after.
	if err := pause(ctx, *settle); err != nil {
		return err
	}
	tr, err := tree(c.pid())
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	var rss, pss int64
	procs := 0
	for _, p := range tr {
		if m.is(p.pid) {
			continue
		}
		r, s, err := memKiB(p.pid)
		if err != nil {
			return fmt.Errorf("memory of %d: %w", p.pid, err)
		}
		rss, pss, procs = rss+r, pss+s, procs+1
	}

	t1 := time.Now()
	if err := syscall.Kill(c.pid(), syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal supervisor: %w", err)
	}
	err = poll(ctx, *timeout, 5*time.Millisecond, "wait for teardown", func() (bool, error) {
		if !c.exited() {
			return false, nil
		}
		k, err := m.count()
		return k == 0, err
	})
	if err != nil {
		return err
	}
	teardown := time.Since(t1)
	fmt.Fprintf(stdout, "startup_ms=%.3f rss_kib=%d pss_kib=%d procs=%d teardown_ms=%.3f\n",
		ms(startup), rss, pss, procs, ms(teardown))
	return nil
}

// spec is one line of idle's spec file: NAME<TAB>MARKER<TAB>SHELL COMMAND.
type spec struct {
	name, mark, command string
}

func readSpecs(path string) ([]spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	var out []spec
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want NAME<TAB>MARKER<TAB>COMMAND", path, i+1)
		}
		out = append(out, spec{name: f[0], mark: f[1], command: f[2]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no supervisors", path)
	}
	return out, nil
}

// idle starts every supervisor of the spec file (one after the other, each
// until its n workload processes run), lets them settle, and then measures
// the CPU time each one's own processes use over a single shared window.
// Sharing the window keeps the long 60 s measurement to one per round, and
// every supervisor sees the same background load. Nothing is polled during
// the window. Prints NAME cpu_ms=... procs=... per supervisor.
func idle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("idle", stderr)
	n := fs.Int("n", 200, "number of workload processes per supervisor")
	window := fs.Duration("window", time.Minute, "idle window")
	settle := fs.Duration("settle", 2*time.Second, "pause between the last startup and the window")
	timeout := fs.Duration("timeout", 2*time.Minute, "limit for each startup")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want one spec file")
	}
	specs, err := readSpecs(fs.Arg(0))
	if err != nil {
		return err
	}
	type running struct {
		spec
		m       marker
		c       *child
		members []int
		before  int64
	}
	var rs []*running
	defer func() {
		for _, r := range rs {
			r.c.kill()
			killMarked(r.m)
		}
	}()
	for _, s := range specs {
		m := newMarker(s.mark)
		if err := checkClean(m, s.mark); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		c, err := start([]string{"/bin/sh", "-c", s.command}, "")
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		r := &running{spec: s, m: m, c: c}
		rs = append(rs, r)
		err = poll(ctx, *timeout, 20*time.Millisecond, s.name+": wait for workload", func() (bool, error) {
			if c.exited() {
				return false, c.early()
			}
			k, err := m.count()
			return k >= *n, err
		})
		if err != nil {
			return err
		}
	}
	// Not a synchronisation: startup work (logging, state changes) must be
	// over before the window, or it would be counted as idle CPU.
	if err := pause(ctx, *settle); err != nil {
		return err
	}
	for _, r := range rs {
		tr, err := tree(r.c.pid())
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		for _, p := range tr {
			if !r.m.is(p.pid) {
				r.members = append(r.members, p.pid)
			}
		}
		if r.before, err = cpuSum(r.members); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}
	if err := pause(ctx, *window); err != nil {
		return err
	}
	for _, r := range rs {
		after, err := cpuSum(r.members)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprintf(stdout, "%s cpu_ms=%.3f procs=%d\n", r.name, float64(after-r.before)/1e6, len(r.members))
	}
	for _, r := range rs {
		_ = syscall.Kill(r.c.pid(), syscall.SIGTERM)
	}
	var errs []error
	for _, r := range rs {
		if err := r.c.wait(*timeout); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
		}
	}
	return errors.Join(errs...)
}

func cpuSum(members []int) (int64, error) {
	var sum int64
	for _, pid := range members {
		n, err := cpuNanos(pid)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// logs times a log flood: from just before the supervisor starts until the
// line -last is in the last 4 KiB of -file (where the supervisor, or its
// logger, puts the child's output). Prints ms=....
func logs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("logs", stderr)
	file := fs.String("file", "", "file that receives the child's lines")
	last := fs.String("last", "END-OF-STREAM", "the child's last line")
	timeout := fs.Duration("timeout", 5*time.Minute, "limit")
	out := fs.String("out", "", "file for the supervisor's stdout and stderr (default /dev/null)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("-file is required")
	}
	want := []byte(*last + "\n")
	t0 := time.Now()
	c, err := start(fs.Args(), *out)
	if err != nil {
		return err
	}
	defer c.kill()
	buf := make([]byte, 4096)
	err = poll(ctx, *timeout, 5*time.Millisecond, "wait for the last line", func() (bool, error) {
		exited := c.exited() // before reading: output written before exit is then in the file
		if found, err := tailHas(*file, buf, want); err != nil || found {
			return found, err
		}
		if exited {
			return false, c.early()
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	elapsed := time.Since(t0)
	if err := c.stop(c.pid(), 30*time.Second); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ms=%.3f\n", ms(elapsed))
	return nil
}

// tailHas reports whether the last len(buf) bytes of path contain want. A
// file not created yet does not.
func tailHas(path string, buf, want []byte) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	off := max(st.Size()-int64(len(buf)), 0)
	k, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Contains(buf[:k], want), nil
}

// zombies runs a supervisor as PID 1 of a new PID namespace (COMMAND is
// "unshare --pid --fork --mount-proc SUPERVISOR..."). Its child spawns
// orphans running -orphan and creates -done when it has spawned them all.
// Once no orphan is alive any more, it polls the zombies in the namespace,
// observed from outside through /proc/<pid>/ns, until there are none.
// Prints zombies (the count -after the last orphan was seen alive),
// clear_ms (from then until no zombie was left) and peak (the most zombies
// seen at one poll).
func zombies(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("zombies", stderr)
	orphan := fs.String("orphan", "", "command line of every orphan, e.g. \"sleep 1.424242\"")
	done := fs.String("done", "", "file the child creates once it has spawned every orphan")
	after := fs.Duration("after", time.Second, "pause between the last orphan's exit and the count")
	timeout := fs.Duration("timeout", time.Minute, "limit for each wait")
	out := fs.String("out", "", "file for the supervisor's stdout and stderr (default /dev/null)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *orphan == "" || *done == "" {
		return errors.New("-orphan and -done are required")
	}
	m := newMarker(*orphan)
	if err := checkClean(m, *orphan); err != nil {
		return err
	}
	if err := os.Remove(*done); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	c, err := start(fs.Args(), *out)
	if err != nil {
		return err
	}
	defer killMarked(m)
	defer c.kill()

	// unshare --fork: the namespace's PID 1 is unshare's only child.
	var pid1 int
	err = poll(ctx, *timeout, 10*time.Millisecond, "find the namespace's PID 1", func() (bool, error) {
		if c.exited() {
			return false, c.early()
		}
		ps, err := all()
		for _, p := range ps {
			if p.ppid == c.pid() {
				pid1 = p.pid
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		return err
	}
	ns, err := pidNS(pid1)
	if err != nil {
		return err
	}
	if self, err := pidNS(os.Getpid()); err != nil || self == ns {
		return fmt.Errorf("process %d is not in a new PID namespace", pid1)
	}
	err = poll(ctx, *timeout, 10*time.Millisecond, "wait for "+*done, func() (bool, error) {
		if c.exited() {
			return false, c.early()
		}
		_, err := os.Stat(*done)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return err
	}
	peak := 0
	err = poll(ctx, *timeout, 20*time.Millisecond, "wait for the orphans to exit", func() (bool, error) {
		if c.exited() {
			return false, c.early()
		}
		live, z, err := census(ns, m)
		peak = max(peak, z)
		return live == 0, err
	})
	if err != nil {
		return err
	}
	// From here no new zombie can appear, so the count only falls: poll
	// until it is zero, and take the count at -after on the way. clear is
	// 0 when the first poll finds none: the poll period (20 ms) is the
	// resolution, and anything below it is reported as 0.
	dead := time.Now()
	left := -1
	var clear time.Duration
	first := true
	err = poll(ctx, *timeout, 20*time.Millisecond, "wait for every orphan to be reaped", func() (bool, error) {
		el := time.Since(dead)
		_, z, err := census(ns, m)
		if err != nil {
			return false, err
		}
		peak = max(peak, z)
		if left < 0 && (z == 0 || el >= *after) {
			left = z
		}
		if z == 0 && !first {
			clear = el
		}
		first = false
		return z == 0, nil
	})
	if err != nil {
		return err
	}
	if err := c.stop(pid1, 30*time.Second); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "zombies=%d clear_ms=%.3f peak=%d\n", left, ms(clear), peak)
	return nil
}

// census counts, among the processes of PID namespace ns, the live ones
// running m's command line and the zombies.
func census(ns string, m marker) (live, zombie int, err error) {
	ps, err := pids()
	if err != nil {
		return 0, 0, err
	}
	for _, pid := range ps {
		if l, err := pidNS(pid); err != nil || l != ns {
			continue
		}
		if m.is(pid) {
			live++
			continue
		}
		if p, err := readStat(pid); err == nil && p.state == 'Z' {
			zombie++
		}
	}
	return live, zombie, nil
}

// chain times readiness hops along a dependency chain of n links. Each
// link appends "SECONDS start NAME" when it runs and "SECONDS ready NAME"
// just before it signals readiness; names sort in chain order. A hop is
// from one link's ready to the next link's start: the supervisor noticing
// readiness, deciding, and (for podvisor) spawning the next link. Prints
// hop_ms (mean), max_hop_ms and total_ms (first ready to last start).
func chain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("chain", stderr)
	events := fs.String("events", "", "file the links append their events to")
	n := fs.Int("n", 10, "number of links")
	timeout := fs.Duration("timeout", time.Minute, "limit")
	out := fs.String("out", "", "file for the supervisor's stdout and stderr (default /dev/null)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *events == "" || *n < 2 {
		return errors.New("-events and -n >= 2 are required")
	}
	if err := os.Remove(*events); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	c, err := start(fs.Args(), *out)
	if err != nil {
		return err
	}
	defer c.kill()
	var starts, readies map[string]float64
	err = poll(ctx, *timeout, 10*time.Millisecond, "wait for the last link", func() (bool, error) {
		if c.exited() {
			return false, c.early()
		}
		var err error
		starts, readies, err = readEvents(*events)
		return len(starts) >= *n, err
	})
	if err != nil {
		return err
	}
	if err := c.stop(c.pid(), 30*time.Second); err != nil {
		return err
	}
	names := make([]string, 0, len(starts))
	for name := range starts {
		names = append(names, name)
	}
	sort.Strings(names)
	var sum, worst float64
	for i := 1; i < len(names); i++ {
		ready, ok := readies[names[i-1]]
		if !ok {
			return fmt.Errorf("link %s never reported ready", names[i-1])
		}
		hop := (starts[names[i]] - ready) * 1000
		if hop < 0 {
			return fmt.Errorf("link %s started before %s was ready", names[i], names[i-1])
		}
		sum += hop
		worst = max(worst, hop)
	}
	total := (starts[names[len(names)-1]] - readies[names[0]]) * 1000
	fmt.Fprintf(stdout, "hop_ms=%.3f max_hop_ms=%.3f total_ms=%.3f\n", sum/float64(len(names)-1), worst, total)
	return nil
}

func readEvents(path string) (starts, readies map[string]float64, err error) {
	starts, readies = map[string]float64{}, map[string]float64{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return starts, readies, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue // a line being written right now
		}
		t, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		switch fields[1] {
		case "start":
			starts[fields[2]] = t
		case "ready":
			readies[fields[2]] = t
		}
	}
	return starts, readies, sc.Err()
}
