package e2e

// FAULTS §3.B (process faults) seen from outside: restarts and backoff in
// event-file timestamps, zombies and process states in /proc, exit codes in
// /status, /metrics and podvisor's own exit code, and podvisor's output.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestFault_B1_ZeroExitUnderAlwaysBacksOff: a service that exits 0 at once
// under restart: always is restarted with backoff (no hot loop), and the
// restart counter matches the starts.
func TestFault_B1_ZeroExitUnderAlwaysBacksOff(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  quick:
    command: `+ffq(ev("quick", "start")+"; exit 0")+`
    restart: {policy: always, backoff: 100ms, max_backoff: 10s}
`)
	// Starts at 0, 0.1, 0.3, 0.7 s; the fifth is due at 1.5 s.
	eventually(t, 5*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "quick", "start")) >= 4 }, "fewer than 4 starts")
	restarts, ok := ffMetric(t, r, `podvisor_process_restarts_total{process="quick"}`)
	starts := filterEvents(r.ReadEvents(t), "quick", "start")
	if !ok || int(restarts) != len(starts)-1 {
		t.Errorf("restarts_total = %v (present %v) after %d starts, want %d", restarts, ok, len(starts), len(starts)-1)
	}
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		if d := starts[i+1].At.Sub(starts[i].At); d < want-10*time.Millisecond || d > want+eps() {
			t.Errorf("start %d came %v after the previous one, want %v (backoff doubling)", i+1, d, want)
		}
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_B2_CrashLoopBacksOffThenFails: exit 1 forever; backoff doubles
// up to max_backoff, podvisor spends little CPU, /readyz is 503 throughout,
// and once limit is spent the service's failure is fatal: podvisor exits with
// its code and nothing more is started.
func TestFault_B2_CrashLoopBacksOffThenFails(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  crash:
    command: `+ffq(ev("crash", "start")+"; exit 3")+`
    restart: {policy: always, backoff: 100ms, max_backoff: 400ms, limit: 4}
`)
	pv := r.Pid()
	cpu0, t0 := ffCPU(t, pv), time.Now()
	sawBackoff := false
	for !r.Exited() {
		// One snapshot: a service without a readiness check counts as ready
		// while it runs, but never while it waits to restart.
		if code, body := r.Get(t, "/status"); code == http.StatusOK {
			var st ffStatus
			if err := json.Unmarshal([]byte(body), &st); err == nil && st.proc("crash").State == "backoff" {
				sawBackoff = true
				if st.Ready || st.proc("crash").Ready {
					t.Fatalf("ready while crash waits to restart: %s", body)
				}
			}
		}
		cpu, err := ffCPUErr(pv)
		if err != nil {
			break // exited and reaped meanwhile
		}
		// A hot loop would burn a whole core; five spawns and these /status
		// requests cost a few per cent.
		if used, wall := cpu-cpu0, time.Since(t0); used > 100*time.Millisecond+wall/4 {
			t.Fatalf("podvisor used %v of CPU in %v of crash loop", used, wall)
		}
		time.Sleep(100 * time.Millisecond) // sampling period, not synchronisation
	}
	if !sawBackoff {
		t.Error("never saw crash in backoff")
	}
	code, _ := r.Wait(10 * time.Second)
	if code != 3 {
		t.Fatalf("exit code %d, want the crashing service's 3\n%s", code, r.Stdout)
	}
	starts := filterEvents(r.ReadEvents(t), "crash", "start")
	if len(starts) != 5 {
		t.Fatalf("%d starts, want 5 (limit 4 restarts)", len(starts))
	}
	for i, want := range []time.Duration{100, 200, 400, 400} {
		want *= time.Millisecond
		if d := starts[i+1].At.Sub(starts[i].At); d < want-10*time.Millisecond || d > want+eps() {
			t.Errorf("restart %d came %v after the previous start, want %v", i+1, d, want)
		}
	}
	if !r.Stdout.Contains("process=crash") {
		t.Errorf("no log line about crash:\n%s", r.Stdout)
	}
}

// TestFault_B6_SubreaperReapsZombieFactory: in subreaper mode (not PID 1) a
// child leaving 300 short-lived orphans leaves no zombie, and its own exit
// code still reaches podvisor's exit code.
func TestFault_B6_SubreaperReapsZombieFactory(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  factory:
    type: job
    command: `+ffq(`for i in $(seq 300); do (sleep 0.01 &); done; `+ev("factory", "spawned")+
		`; while [ ! -e "$E2E_DIR/gate" ]; do sleep 0.02; done; exit 9`)+`
`)
	r.WaitEvent(t, "factory", "spawned", 20*time.Second)
	pv := r.Pid()
	eventually(t, time.Second, func() bool { return len(zombies(descendants(pv))) == 0 },
		"zombies below podvisor: %v", ffLazy(func() string { return fmt.Sprint(zombies(descendants(pv))) }))
	ffWrite(t, r.Dir, "gate", nil, 0o644)
	if code, _ := r.Wait(10 * time.Second); code != 9 {
		t.Fatalf("exit code %d, want the job's 9", code)
	}
}

// TestFault_B8_ClosedStdoutIsNotExit: a child that closes stdout and stderr
// keeps running and podvisor does not spin on the EOF.
func TestFault_B8_ClosedStdoutIsNotExit(t *testing.T) {
	t.Parallel()
	m := ffMarker()
	r := ffStartHTTP(t, `
processes:
  mute:
    command: `+ffq(`echo bye; exec 1>&- 2>&-; exec sleep `+m)+`
`)
	r.Stdout.WaitFor(t, `mute +\| bye`, 5*time.Second)
	pid := ffPidOf(t, m, 5*time.Second)
	pv := r.Pid()
	cpu0 := ffCPU(t, pv)
	hold := time.Now().Add(2 * time.Second)
	for time.Now().Before(hold) {
		if p := ffGetStatus(t, r).proc("mute"); p.State != "running" || p.Pid != pid {
			t.Fatalf("mute is %s (pid %d) after closing its output, want running pid %d", p.State, p.Pid, pid)
		}
		time.Sleep(100 * time.Millisecond) // sampling period of a negative check
	}
	if d := ffCPU(t, pv) - cpu0; d > 200*time.Millisecond {
		t.Errorf("podvisor used %v of CPU in 2 s with a closed child stdout", d)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_B9_EndlessLineBoundedMemory: 256 MiB without a newline pass
// through in bounded memory and reasonable time, and a later line still
// triggers log readiness.
func TestFault_B9_EndlessLineBoundedMemory(t *testing.T) {
	t.Parallel()
	const size = 256 << 20
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	// The reference: the same bytes through a plain pipe.
	start := time.Now()
	if err := exec.Command("sh", "-c", fmt.Sprintf("head -c %d /dev/zero | cat >/dev/null", size)).Run(); err != nil {
		t.Fatal(err)
	}
	ref := time.Since(start)

	r := startPodvisor(t, fmt.Sprintf(`
processes:
  flood:
    command: %s
    ready: {log: "^ready$"}
  app:
    depends_on: [flood]
    command: %s
`, ffq(ev("flood", "start")+fmt.Sprintf("; head -c %d /dev/zero; echo; ", size)+ev("flood", "flooded")+"; echo ready; exec sleep 1000"),
		ffq(ev("app", "start")+"; exec sleep 1000")), withStdout(devnull))
	pv := r.Pid()
	var peak int64
	eventually(t, 60*time.Second, func() bool {
		if rss := ffStatusKiB(t, pv, "VmRSS"); rss > peak {
			peak = rss
		}
		_, ok := findEvent(r.ReadEvents(t), "flood", "flooded")
		return ok
	}, "the flood did not finish")
	evs := r.ReadEvents(t)
	s, _ := findEvent(evs, "flood", "start")
	f, _ := findEvent(evs, "flood", "flooded")
	if took := f.At.Sub(s.At); took > 3*ref+eps() {
		t.Errorf("256 MiB took %v through podvisor, %v through a pipe: want <= 3x + %v", took, ref, eps())
	}
	if hwm := ffStatusKiB(t, pv, "VmHWM"); hwm > peak {
		peak = hwm
	}
	if peak > 100<<10 {
		t.Errorf("podvisor peak RSS %d KiB, want < 100 MiB", peak)
	}
	t.Logf("256 MiB without a newline: %v through podvisor (%v through a pipe), peak RSS %d KiB", f.At.Sub(s.At), ref, peak)
	r.WaitEvent(t, "app", "start", 5*time.Second)
	ffStopClean(t, r, 10*time.Second)
}

// ffHostile is what a hostile child prints: a fake podvisor line, ANSI
// escapes, a lone CR, invalid UTF-8 and NUL bytes.
const ffHostile = `printf 'podvisor | level=ERROR msg=fake-line\n{"process":"podvisor","msg":"fake-json"}\n\033[31mred\033[0m\rcr\n\377\376\000nul\n'`

// TestFault_B10_E9_GarbageOutputStaysFramed: whatever a child prints, every
// output line is framed as the child's (text: its name prefix; JSON: one
// object per line with process set to the child), so it can neither break
// the log nor pass for podvisor's own line.
func TestFault_B10_E9_GarbageOutputStaysFramed(t *testing.T) {
	t.Parallel()
	yaml := `
processes:
  evil:
    type: job
    command: ` + ffq(ffHostile) + `
`
	t.Run("json", func(t *testing.T) {
		r := startPodvisor(t, yaml, withArgs("--log-format", "json"))
		if code, _ := r.Wait(10 * time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		var evil int
		for _, l := range r.Stdout.Lines() {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("line does not parse as JSON: %v\n%q", err, l)
			}
			switch rec["process"] {
			case "evil":
				evil++
			case "podvisor":
				if s := fmt.Sprint(rec); strings.Contains(s, "fake") {
					t.Errorf("a child line passed for podvisor's: %q", l)
				}
			default:
				t.Errorf("unexpected process in %q", l)
			}
		}
		if evil != 4 {
			t.Errorf("%d lines of evil, want 4:\n%s", evil, r.Stdout)
		}
	})
	t.Run("text", func(t *testing.T) {
		r := startPodvisor(t, yaml)
		if code, _ := r.Wait(10 * time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		var evil int
		for _, l := range strings.Split(strings.TrimSuffix(r.Stdout.String(), "\n"), "\n") {
			name, _, ok := strings.Cut(l, " | ")
			switch strings.TrimSpace(name) {
			case "evil":
				evil++
			case "podvisor":
				if strings.Contains(l, "fake") {
					t.Errorf("a child line passed for podvisor's: %q", l)
				}
			default:
				t.Errorf("line without a process prefix (ok %v): %q", ok, l)
			}
		}
		if evil != 4 {
			t.Errorf("%d lines of evil, want 4:\n%q", evil, r.Stdout)
		}
	})
}

// TestFault_B11_ConcurrentFloods: three processes flood at once; every line
// arrives whole, in order per stream, none lost; meanwhile /readyz answers
// quickly and SIGTERM is honoured at once.
func TestFault_B11_ConcurrentFloods(t *testing.T) {
	t.Parallel()
	const n = 300000
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	flood := func(name string) string {
		// Lines of varying length so batches of every size mix in the sink.
		return fmt.Sprintf("  %s:\n    command: %s\n", name,
			ffq(fmt.Sprintf(`awk 'BEGIN { for (i = 1; i <= %d; i++) { printf "%%d %%s\n", i, substr("%s", 1, i %% 97) } }'; `, n, strings.Repeat("x", 96))+
				ev(name, "done")+"; exec sleep 1000"))
	}
	r := ffStartHTTP(t, "processes:\n"+flood("f1")+flood("f2")+flood("f3"), withStdout(out))
	done := func() bool {
		evs := r.ReadEvents(t)
		for _, name := range []string{"f1", "f2", "f3"} {
			if _, ok := findEvent(evs, name, "done"); !ok {
				return false
			}
		}
		return true
	}
	var lat []time.Duration
	deadline := time.Now().Add(scaled(60 * time.Second))
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("the floods did not finish within %v", scaled(60*time.Second))
		}
		start := time.Now()
		if code, _ := r.Get(t, "/readyz"); code == 0 {
			t.Fatal("/readyz did not answer during the flood")
		}
		lat = append(lat, time.Since(start))
		time.Sleep(20 * time.Millisecond) // request period
	}
	// The exit waits for the output still queued (up to a few hundred
	// thousand lines on a loaded machine): two eps.
	took := ffStopClean(t, r, 10*time.Second)
	if took > 2*eps() {
		t.Errorf("SIGTERM took %v after the floods, want <= %v", took, 2*eps())
	}
	// The median catches /readyz queued behind the log pump; the worst
	// request catches starvation. A single request slowed by the scheduler
	// of a loaded 2-core machine (the client is descheduled too) is neither:
	// the bound on the worst is loose, the median's tight.
	slices.Sort(lat)
	if len(lat) >= 10 {
		if med := lat[len(lat)/2]; med > scaled(50*time.Millisecond) {
			t.Errorf("/readyz median latency %v during the floods (%d requests), want <= %v", med, len(lat), scaled(50*time.Millisecond))
		}
		if worst := lat[len(lat)-1]; worst > scaled(500*time.Millisecond) {
			t.Errorf("/readyz worst latency %v during the floods (%d requests), want <= %v", worst, len(lat), scaled(500*time.Millisecond))
		}
	}
	f, err := os.Open(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	last := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, line, ok := strings.Cut(sc.Text(), " | ")
		name = strings.TrimSpace(name)
		if !ok || name == "podvisor" {
			continue
		}
		num, rest, _ := strings.Cut(line, " ")
		v, err := strconv.Atoi(num)
		if err != nil || rest != strings.Repeat("x", v%97) {
			t.Fatalf("%s: torn or corrupt line %.80q", name, line)
		}
		if v != last[name]+1 {
			t.Fatalf("%s: line %d after line %d (lost or reordered)", name, v, last[name])
		}
		last[name] = v
	}
	for _, name := range []string{"f1", "f2", "f3"} {
		if last[name] != n {
			t.Errorf("%s: %d lines, want %d", name, last[name], n)
		}
	}
}

// TestFault_B12_LastLineBeforeExit: the last line a process prints before it
// exits is never lost, in 200 of 200 runs.
func TestFault_B12_LastLineBeforeExit(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  last:
    type: job
    command: `+ffq(ev("last", "start")+`; printf "last %s" "$$$$"; exit 1`)+`
    restart: {policy: on-failure, backoff: 1ms, max_backoff: 1ms, limit: 199}
`)
	if code, _ := r.Wait(60 * time.Second); code != 1 {
		t.Fatalf("exit code %d, want 1 (the job fails after its retries)", code)
	}
	starts := filterEvents(r.ReadEvents(t), "last", "start")
	if len(starts) != 200 {
		t.Fatalf("%d runs, want 200", len(starts))
	}
	printed := map[string]bool{}
	for _, l := range r.Stdout.Lines() {
		if rest, ok := strings.CutPrefix(l, "last     | last "); ok {
			printed[rest] = true
		}
	}
	var lost []string
	for _, s := range starts {
		if !printed[strconv.Itoa(s.Pid())] {
			lost = append(lost, strconv.Itoa(s.Pid()))
		}
	}
	if len(lost) > 0 {
		t.Errorf("the last line of %d of 200 runs was lost (pids %v)", len(lost), lost)
	}
}

// TestFault_B13_StdinIsDevNull: a process reading stdin gets EOF at once.
func TestFault_B13_StdinIsDevNull(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  reader:
    type: oneshot
    command: `+ffq(`ls -l /proc/self/fd/0 > "$E2E_DIR/fd0"; cat; `+ev("reader", "eof"))+`
  app:
    depends_on: {reader: completed}
    command: `+ffq(ev("app", "start")+"; exec sleep 1000")+`
`)
	r.WaitEvent(t, "app", "start", 5*time.Second)
	if s := readFile(filepath.Join(r.Dir, "fd0")); !strings.HasSuffix(strings.TrimSpace(s), "-> /dev/null") {
		t.Errorf("stdin of the child: %q, want /dev/null", s)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_B14_OOMKillRecordedAndRestarted: a child killed by the kernel's
// OOM killer (a 32 MiB memory cgroup) is recorded as 137 and restarted;
// podvisor is unaffected; the new child's oom_score_adj is the default.
func TestFault_B14_OOMKillRecordedAndRestarted(t *testing.T) {
	t.Parallel()
	cg := ffCgroup(t, "memory")
	ffWrite(t, cg, "memory.limit_in_bytes", []byte(strconv.Itoa(32<<20)), 0)
	m := ffMarker()
	r := ffStartHTTP(t, fmt.Sprintf(`
processes:
  hog:
    command: %s
    restart: {policy: always, backoff: 100ms}
`, ffq(fmt.Sprintf(`if [ -e "$E2E_DIR/oomed" ]; then exec sleep %s; fi; touch "$E2E_DIR/oomed"; echo $$$$ > %s/cgroup.procs; `+
		`exec dd if=/dev/zero of=/dev/null bs=256M count=1`, m, cg))))
	st := ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool {
		p := s.proc("hog")
		return p.Restarts == 1 && p.State == "running"
	}, "hog not restarted once")
	if p := st.proc("hog"); p.ExitCode == nil || *p.ExitCode != 137 {
		t.Errorf("hog's last exit code %v, want 137 (SIGKILL by the OOM killer)", p.ExitCode)
	}
	if v, _ := ffMetric(t, r, `podvisor_process_last_exit_code{process="hog"}`); v != 137 {
		t.Errorf("podvisor_process_last_exit_code %v, want 137", v)
	}
	pid := ffPidOf(t, m, 5*time.Second)
	if adj := strings.TrimSpace(readFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid))); adj != "0" {
		t.Errorf("new child's oom_score_adj %q, want 0", adj)
	}
	if code, _ := r.Get(t, "/livez"); code != http.StatusOK {
		t.Errorf("/livez %d after the OOM kill", code)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_B15_B16_ExitCodesReportedExactly: every exit code 0-255 shows in
// /status and /metrics exactly (all declared successful, so all run in one
// podvisor), and each is podvisor's own exit code when it is a job's;
// SIGSEGV and SIGABRT deaths are 139 and 134, never -1 or 255.
func TestFault_B15_B16_ExitCodesReportedExactly(t *testing.T) {
	t.Parallel()
	t.Run("status and metrics", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("processes:\n")
		all := make([]string, 256)
		for c := range 256 {
			all[c] = strconv.Itoa(c)
		}
		for c := range 256 {
			fmt.Fprintf(&b, "  c%d:\n    command: ['sh', '-c', 'exit %d']\n    restart: never\n    success_exit_codes: [%s]\n", c, c, strings.Join(all, ", "))
		}
		for _, sig := range []string{"SEGV", "ABRT"} {
			fmt.Fprintf(&b, "  sig%s:\n    command: ['sh', '-c', 'ulimit -c 0; kill -%s $$$$']\n    restart: {policy: always, backoff: 1h, max_backoff: 1h}\n", sig, sig)
		}
		r := ffStartHTTP(t, b.String())
		st := ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
			for _, p := range s.Processes {
				if p.ExitCode == nil {
					return false
				}
			}
			return len(s.Processes) == 258
		}, "not every process exited")
		_, metrics := r.Get(t, "/metrics")
		for _, p := range st.Processes {
			want := map[string]int{"sigSEGV": 139, "sigABRT": 134}[p.Name]
			if strings.HasPrefix(p.Name, "c") {
				want, _ = strconv.Atoi(p.Name[1:])
			}
			if *p.ExitCode != want {
				t.Errorf("%s: exit_code %d, want %d", p.Name, *p.ExitCode, want)
			}
			series := fmt.Sprintf("podvisor_process_last_exit_code{process=%q} %d\n", p.Name, want)
			if !strings.Contains(metrics, series) {
				t.Errorf("/metrics lacks %q", strings.TrimSpace(series))
			}
		}
		ffStopClean(t, r, 10*time.Second)
	})
	t.Run("podvisor exit code", func(t *testing.T) {
		codes := make([]int, 0, 257)
		for c := range 256 {
			codes = append(codes, c)
		}
		codes = append(codes, -int(syscall.SIGSEGV), -int(syscall.SIGABRT)) // negative: die of that signal
		dir := t.TempDir()
		var mu sync.Mutex // guards bad
		var bad []string
		var wg sync.WaitGroup
		work := make(chan int)
		for range 4 {
			wg.Go(func() {
				for c := range work {
					cmd, want := fmt.Sprintf("exit %d", c), c
					if c < 0 {
						cmd, want = fmt.Sprintf("ulimit -c 0; kill -%d $$$$", -c), 128-c
					}
					p := filepath.Join(dir, fmt.Sprintf("c%d.yaml", c+100))
					err := os.WriteFile(p, []byte("processes:\n  job:\n    type: job\n    command: '"+cmd+"'\n"), 0o644)
					var res ffCLI
					if err == nil {
						res, err = ffRunCLIErr(dir, 20*time.Second, "run", "-c", p, "--listen", "off")
					}
					if err != nil || res.Code != want {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("%s: exit %d (%v), want %d", cmd, res.Code, err, want))
						mu.Unlock()
					}
				}
			})
		}
		for _, c := range codes {
			work <- c
		}
		close(work)
		wg.Wait()
		sort.Strings(bad)
		for _, b := range bad {
			t.Error(b)
		}
	})
}

// TestFault_B18_TerminalNeverStopsAnyone: podvisor on a terminal with tostop
// set, its children writing constantly: no child and not podvisor itself
// ever ends up stopped (state T) by SIGTTIN/SIGTTOU.
func TestFault_B18_TerminalNeverStopsAnyone(t *testing.T) {
	t.Parallel()
	m := ffMarker()
	r := startPodvisor(t, `
processes:
  chatty:
    command: `+ffq(`while :; do echo chat; echo err >&2; sleep 0.01; done`)+`
  reader:
    command: `+ffq(`cat; exec sleep `+m)+`
`, withPTY())
	pv := r.Pid()
	// tostop on podvisor's terminal: a background writer would be stopped.
	tty, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pv))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("stty", "-F", tty, "tostop").CombinedOutput(); err != nil {
		t.Fatalf("stty tostop on %s: %v %s", tty, err, out)
	}
	ffPidOf(t, m, 5*time.Second)
	r.Stdout.WaitFor(t, `chatty +\| chat`, 5*time.Second)
	hold := time.Now().Add(2 * time.Second)
	for time.Now().Before(hold) {
		for _, p := range append([]int{pv}, descendants(pv)...) {
			if st, err := readStat(p); err == nil && st.State == 'T' {
				t.Fatalf("process %d (%s) is stopped", p, st.Comm)
			}
		}
		time.Sleep(20 * time.Millisecond) // sampling period of a negative check
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestFault_B20_NoFDLeaksToChildren: with the HTTP listener open, a notify
// socket, a notify fd and other children's pipes around, each child has
// only fds 0-2 (plus its declared notify fd), and no socket.
func TestFault_B20_NoFDLeaksToChildren(t *testing.T) {
	t.Parallel()
	m1, m2, m3 := ffMarker(), ffMarker(), ffMarker()
	r := ffStartHTTP(t, `
processes:
  plain:
    command: ['sleep', '`+m1+`']
  fd3:
    command: ['sh', '-c', 'exec sleep `+m2+`']
    ready: {notify: "fd:3"}
  sock:
    command: ['sleep', '`+m3+`']
    ready: {notify: systemd}
    depends_on: {plain: started, fd3: started}
`)
	// A few HTTP requests so that the server has connections around too.
	for range 3 {
		r.Get(t, "/status")
	}
	for _, c := range []struct {
		marker string
		want   int // fds expected beyond 0-2
	}{{m1, 0}, {m2, 1}, {m3, 0}} {
		pid := ffPidOf(t, c.marker, 5*time.Second)
		// The program itself may hold a file briefly while it starts (sleep
		// reads its locale): what must settle is the inherited set.
		var fds map[int]string
		eventually(t, 2*time.Second, func() bool {
			var err error
			fds, err = openFDs(pid)
			if err != nil {
				t.Fatal(err)
			}
			return len(fds) == 3+c.want
		}, "child %s has fds %v, want 0-%d", c.marker, ffLazy(func() string { return fmt.Sprint(fds) }), 2+c.want)
		if fds[0] != "/dev/null" {
			t.Errorf("child %s has stdin %q, want /dev/null", c.marker, fds[0])
		}
		for fd, target := range fds {
			if strings.HasPrefix(target, "socket:") {
				t.Errorf("child %s inherited a socket on fd %d", c.marker, fd)
			}
		}
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_B22_DiesBeforeReady: a dependency that crash-loops before it is
// ever ready keeps its dependent pending (never started), which says what
// it waits for, and the dependency is restarted per its policy.
func TestFault_B22_DiesBeforeReady(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  db:
    command: `+ffq(ev("db", "start")+"; exit 1")+`
    ready: {file: "{{dir}}/db-ready"}
    restart: {policy: always, backoff: 50ms, max_backoff: 100ms}
  app:
    depends_on: [db]
    command: `+ffq(ev("app", "start")+"; exec sleep 1000")+`
`)
	eventually(t, 5*time.Second, func() bool { return len(filterEvents(r.ReadEvents(t), "db", "start")) >= 4 }, "db not restarted")
	st := ffGetStatus(t, r)
	if app := st.proc("app"); app.State != "pending" || !slices.Equal(app.WaitingFor, []string{"db: ready"}) {
		t.Errorf("app: %+v, want pending waiting for db: ready", app)
	}
	if _, ok := findEvent(r.ReadEvents(t), "app", "start"); ok {
		t.Fatal("app started although db was never ready")
	}
	if code, _ := r.Get(t, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d, want 503", code)
	}
	ffStopClean(t, r, 10*time.Second)
}
