package e2e

// Black-box tests of what podvisor shows about its processes: resources
// summed over each process's tree, oom_score_adj, OOM kills, the timeline
// with its critical chain, and the shutdown report.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/svgcheck"
)

// obPython returns a python3 to run children with: Debian's when installed
// (a version manager's shim adds its own processes to every tree).
func obPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("python3 is required (Debian package python3)")
		}
		t.Skip("python3 not installed")
	}
	return p
}

// obWriteScript writes an executable shell script into dir.
func obWriteScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// obWaitLine waits until path holds a complete line and returns it.
func obWaitLine(t *testing.T, path string, timeout time.Duration) string {
	t.Helper()
	var line string
	eventually(t, timeout, func() bool {
		b, err := os.ReadFile(path)
		line = strings.TrimSpace(string(b))
		return err == nil && bytes.HasSuffix(b, []byte("\n"))
	}, "no line in %s", path)
	return line
}

// obMetric reads one sample of /metrics, e.g. `podvisor_process_threads{process="a"}`.
func obMetric(t *testing.T, r *Run, series string) (float64, bool) {
	t.Helper()
	code, body := r.Get(t, "/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics = %d", code)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f, true
		}
	}
	return 0, false
}

type obProc struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	Pid       int    `json:"pid"`
	Restarts  int    `json:"restarts"`
	Reason    string `json:"reason"`
	OOMKills  int    `json:"oom_kills"`
	Resources *struct {
		CPUSeconds  float64 `json:"cpu_seconds"`
		MemoryBytes uint64  `json:"memory_bytes"`
		OpenFDs     int     `json:"open_fds"`
		Threads     int     `json:"threads"`
		Processes   int     `json:"processes"`
	} `json:"resources"`
}

func obStatus(t *testing.T, r *Run, name string) obProc {
	t.Helper()
	code, body := r.Get(t, "/status")
	if code != 200 {
		t.Fatalf("GET /status = %d", code)
	}
	var st struct {
		Processes []obProc `json:"processes"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("decode /status: %v\n%s", err, body)
	}
	for _, p := range st.Processes {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no process %q in /status: %s", name, body)
	return obProc{}
}

// obProcFigures is /proc's own view of pids: VmRSS summed, and
// utime+stime+cutime+cstime summed, in seconds.
func obProcFigures(t *testing.T, pids []int) (rss uint64, cpu float64) {
	t.Helper()
	for _, pid := range pids {
		v, err := statusField(pid, "VmRSS")
		if err != nil {
			t.Fatalf("pid %d: %v", pid, err)
		}
		kb, _ := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
		rss += kb << 10
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		for _, n := range []int{14, 15, 16, 17} {
			ticks, _ := strconv.ParseFloat(f[n-3], 64)
			cpu += ticks / 100
		}
	}
	return rss, cpu
}

func obWithin(got, want, frac float64) bool {
	return got >= want*(1-frac) && got <= want*(1+frac)
}

// TestObserve_Resources: a tree with one process holding 50 MB and one that
// burned 1 s of CPU, plus a daemonized grandchild (own session, parent
// gone): /metrics, /status and `podvisor status` show the tree's sums, within
// 10% of /proc's own figures for the same processes.
func TestObserve_Resources(t *testing.T) {
	t.Parallel()
	py := obPython(t)
	dir := t.TempDir()
	obWriteScript(t, dir, "tree.sh", `
OUT=`+dir+`/mem `+py+` -c "
import os, time
b = b'x' * (50 << 20)
open(os.environ['OUT'], 'w').write('%d\n' % os.getpid())
time.sleep(1000)" &
OUT=`+dir+`/cpu `+py+` -c "
import os, time
t = time.process_time()
while time.process_time() - t < 1.0: pass
open(os.environ['OUT'], 'w').write('%d\n' % os.getpid())
time.sleep(1000)" &
sh -c 'setsid sleep 1017 & echo $! > `+dir+`/daemon'
wait
`)
	r := startPodvisor(t, `
processes:
  tree:
    command: ["/bin/sh", "`+dir+`/tree.sh"]
  idle:
    command: ["sleep", "1018"]
`, withHTTP())
	memPid, _ := strconv.Atoi(obWaitLine(t, filepath.Join(dir, "mem"), 30*time.Second))
	cpuPid, _ := strconv.Atoi(obWaitLine(t, filepath.Join(dir, "cpu"), 30*time.Second))
	daemon, _ := strconv.Atoi(obWaitLine(t, filepath.Join(dir, "daemon"), 30*time.Second))
	eventually(t, 10*time.Second, func() bool {
		st, err := readStat(daemon)
		return err == nil && st.PPid == r.Pid()
	}, "daemon %d was not reparented to podvisor", daemon)

	tree := obStatus(t, r, "tree")
	members := []int{tree.Pid, memPid, cpuPid, daemon}
	wantRSS, wantCPU := obProcFigures(t, members)
	rss, ok1 := obMetric(t, r, `podvisor_process_resident_memory_bytes{process="tree"}`)
	cpu, ok2 := obMetric(t, r, `podvisor_process_cpu_seconds_total{process="tree"}`)
	threads, ok3 := obMetric(t, r, `podvisor_process_threads{process="tree"}`)
	fds, ok4 := obMetric(t, r, `podvisor_process_open_fds{process="tree"}`)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("resource series missing for tree")
	}
	if rss < 50<<20 || !obWithin(rss, float64(wantRSS), 0.10) {
		t.Errorf("RSS %.0f, want >= 50 MiB and within 10%% of /proc's %d", rss, wantRSS)
	}
	if cpu < 0.95 || !obWithin(cpu, wantCPU, 0.10) {
		t.Errorf("CPU %.2fs, want >= 0.95 s and within 10%% of /proc's %.2fs", cpu, wantCPU)
	}
	if threads < 4 || fds < 12 {
		t.Errorf("threads %.0f, fds %.0f: want at least 4 and 12 (4 members with 0-2 each)", threads, fds)
	}

	// /status counts the same members, daemon included.
	tree = obStatus(t, r, "tree")
	if tree.Resources == nil || tree.Resources.Processes != 4 {
		t.Fatalf("tree resources %+v, want 4 processes (sh, 2 python3, the daemon)", tree.Resources)
	}
	if idle := obStatus(t, r, "idle"); idle.Resources == nil || idle.Resources.Processes != 1 || idle.Resources.MemoryBytes > 20<<20 {
		t.Errorf("idle resources %+v, want 1 small process", idle.Resources)
	}

	// The table has CPU% and MEM columns.
	out, err := exec.Command(podvisorBin, "status", "--addr", r.Addr).Output()
	if err != nil {
		t.Fatalf("podvisor status: %v", err)
	}
	lines := strings.Split(string(out), "\n")
	if h := strings.Fields(lines[1]); len(h) < 7 || h[5] != "CPU%" || h[6] != "MEM" {
		t.Fatalf("header %q lacks CPU%% MEM after PID", lines[1])
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) < 7 || f[0] != "tree" {
			continue
		}
		mem, err := strconv.ParseFloat(strings.TrimSuffix(f[6], "M"), 64)
		if err != nil || mem < 50 {
			t.Errorf("tree MEM %q, want >= 50M", f[6])
		}
		if pct, err := strconv.ParseFloat(f[5], 64); err != nil || pct <= 0 {
			t.Errorf("tree CPU%% %q, want > 0", f[5])
		}
	}
}

// obMarkerPid waits for the one process whose argv holds marker.
func obMarkerPid(t *testing.T, marker string) int {
	t.Helper()
	var pids []int
	eventually(t, 10*time.Second, func() bool { pids = pidsWithArg(marker); return len(pids) == 1 }, "no single process with %q: %v", marker, pids)
	return pids[0]
}

// TestObserve_OOMScoreAdj: each child runs with its configured
// oom_score_adj; podvisor's own and an unconfigured child's stay as they were.
// A negative value is tried only with CAP_SYS_RESOURCE (some sandboxes drop
// it even for root).
func TestObserve_OOMScoreAdj(t *testing.T) {
	t.Parallel()
	own := strings.TrimSpace(readFile("/proc/self/oom_score_adj"))
	negative := "500"
	if obHasCap(t, 24) { // CAP_SYS_RESOURCE
		negative = "-900"
	}
	r := startPodvisor(t, `
processes:
  batch: {command: [sleep, "1021"], oom_score_adj: 1000}
  proxy: {command: [sleep, "1022"], oom_score_adj: `+negative+`}
  plain: {command: [sleep, "1023"]}
`)
	for marker, want := range map[string]string{"1021": "1000", "1022": negative, "1023": own} {
		pid := obMarkerPid(t, marker)
		if got := strings.TrimSpace(readFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid))); got != want {
			t.Errorf("sleep %s: oom_score_adj %q, want %q", marker, got, want)
		}
	}
	if got := strings.TrimSpace(readFile(fmt.Sprintf("/proc/%d/oom_score_adj", r.Pid()))); got != own {
		t.Errorf("podvisor's own oom_score_adj %q, want %q (unchanged)", got, own)
	}
}

// obHasCap reports whether this process has capability bit in its
// effective set.
func obHasCap(t *testing.T, bit uint) bool {
	t.Helper()
	v, err := statusField(os.Getpid(), "CapEff")
	if err != nil {
		t.Fatal(err)
	}
	caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return caps&(1<<bit) != 0
}

// TestObserve_OOMScoreAdjNeedsCapability: without CAP_SYS_RESOURCE a
// negative value cannot be set; podvisor says so and what to do.
func TestObserve_OOMScoreAdjNeedsCapability(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("setpriv is required (Debian package util-linux)")
		}
		t.Skip("setpriv not installed")
	}
	if strings.TrimSpace(readFile("/proc/self/oom_score_adj")) == "-1000" {
		t.Skip("this test runs at oom_score_adj -1000: no lower value exists")
	}
	r := startPodvisor(t, `
processes:
  proxy: {command: [sleep, "1024"], oom_score_adj: -1000}
`, withWrapper("setpriv", "--inh-caps=-sys_resource", "--ambient-caps=-sys_resource", "--bounding-set=-sys_resource"))
	code, _ := r.Wait(10 * time.Second)
	out := r.Stdout.String()
	if code != 1 || !strings.Contains(out, "oom_score_adj -1000") || !strings.Contains(out, "CAP_SYS_RESOURCE") {
		t.Fatalf("exit %d, want 1 with a message naming oom_score_adj -1000 and CAP_SYS_RESOURCE:\n%s%s", code, out, r.Stderr.String())
	}
}

// obMemoryCgroup creates a memory cgroup limited to limit bytes and returns
// a wrapper argv that moves podvisor into it before exec'ing it. It skips
// when there is no writable memory controller (not root, or no cgroupfs).
func obMemoryCgroup(t *testing.T, limit int64) []string {
	t.Helper()
	name := fmt.Sprintf("podvisor-e2e-%d", time.Now().UnixNano())
	var dir string
	var files [][2]string
	if st, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil && !st.IsDir() {
		dir = filepath.Join("/sys/fs/cgroup/memory", name)
		files = [][2]string{{"memory.limit_in_bytes", strconv.FormatInt(limit, 10)}}
		if _, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"); err == nil {
			files = append(files, [2]string{"memory.memsw.limit_in_bytes", strconv.FormatInt(limit, 10)})
		}
	} else if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(b), "memory") {
		dir = filepath.Join("/sys/fs/cgroup", name)
		files = [][2]string{{"memory.max", strconv.FormatInt(limit, 10)}, {"memory.swap.max", "0"}}
	} else {
		t.Skip("no memory cgroup controller to create a cgroup in")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a memory cgroup (needs root): %v", err)
	}
	t.Cleanup(func() {
		// After the run's own cleanup (registered later, run earlier) has
		// killed everything; the last exits may take a moment.
		deadline := time.Now().Add(scaled(10 * time.Second))
		for os.Remove(dir) != nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil && f[0] == files[0][0] {
			t.Fatalf("limit %s: %v", f[0], err)
		}
	}
	return []string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
}

// TestObserve_OOMKill: in a memory cgroup with a 150 MB limit, a process
// that keeps allocating is killed by the kernel's OOM killer: its reason is
// OOMKilled in /status and the log, the counter is 1, and the other
// process is untouched.
func TestObserve_OOMKill(t *testing.T) {
	t.Parallel()
	py := obPython(t)
	wrapper := obMemoryCgroup(t, 150<<20)
	r := startPodvisor(t, `
processes:
  hog:
    command: ["`+py+`", "-c", "import time\nb = []\nwhile True:\n    b.append(b'x' * (8 << 20))\n    time.sleep(0.01)\n"]
    oom_score_adj: 1000
    restart: {policy: on-failure, backoff: 1h, max_backoff: 1h}
  steady:
    command: ["sleep", "1031"]
`, withHTTP(), withWrapper(wrapper...))
	steady := obMarkerPid(t, "1031")
	var hog obProc
	eventually(t, 60*time.Second, func() bool {
		hog = obStatus(t, r, "hog")
		return hog.OOMKills > 0
	}, "hog was never seen OOM-killed: %+v", hog)
	if hog.Reason != "OOMKilled" || hog.OOMKills != 1 || hog.State != "backoff" {
		t.Errorf("hog %+v, want reason OOMKilled, 1 OOM kill, state backoff", hog)
	}
	if v, _ := obMetric(t, r, `podvisor_process_oom_kills_total{process="hog"}`); v != 1 {
		t.Errorf("podvisor_process_oom_kills_total{hog} = %v, want 1", v)
	}
	if v, _ := obMetric(t, r, `podvisor_process_oom_kills_total{process="steady"}`); v != 0 {
		t.Errorf("podvisor_process_oom_kills_total{steady} = %v, want 0", v)
	}
	r.Stdout.WaitFor(t, `killed by the kernel's OOM killer.*process=hog.*reason=OOMKilled`, 5*time.Second)
	r.Stdout.WaitFor(t, `msg=failed process=hog reason=OOMKilled`, 5*time.Second)
	s := obStatus(t, r, "steady")
	if s.Pid != steady || s.State != "running" || s.Restarts != 0 || s.OOMKills != 0 {
		t.Errorf("steady %+v, want untouched (pid %d, running, no restarts)", s, steady)
	}
	r.Signal(syscall.SIGTERM)
	r.Wait(10 * time.Second)
}

type obTimeline struct {
	CriticalChain []struct {
		Process     string  `json:"process"`
		TimeToReady float64 `json:"time_to_ready"`
		Gates       string  `json:"gates"`
	} `json:"critical_chain"`
	Processes []struct {
		Name         string `json:"name"`
		Incarnations []struct {
			Spawned *time.Time `json:"spawned"`
			Ready   *time.Time `json:"ready"`
		} `json:"incarnations"`
	} `json:"processes"`
}

// TestObserve_CriticalChain: in a diamond (db and cache, app on both, web on
// app), the slow branch (cache, 1.5 s to ready) is the critical chain.
func TestObserve_CriticalChain(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  db:
    command: "touch {{dir}}/db.ready; exec sleep 1041"
    ready: {file: "{{dir}}/db.ready", start_interval: 20ms}
  cache:
    command: "sleep 1.5; touch {{dir}}/cache.ready; exec sleep 1042"
    ready: {file: "{{dir}}/cache.ready", start_interval: 20ms}
  app:
    command: "touch {{dir}}/app.ready; exec sleep 1043"
    depends_on: [db, cache]
    ready: {file: "{{dir}}/app.ready", start_interval: 20ms}
  web:
    command: ["sleep", "1044"]
    depends_on: {app: ready}
`, withHTTP())
	var tl obTimeline
	eventually(t, 20*time.Second, func() bool {
		code, body := r.Get(t, "/timeline")
		if code != 200 {
			t.Fatalf("GET /timeline = %d", code)
		}
		if err := json.Unmarshal([]byte(body), &tl); err != nil {
			t.Fatalf("decode: %v\n%s", err, body)
		}
		return len(tl.CriticalChain) > 0 && tl.CriticalChain[len(tl.CriticalChain)-1].Process == "web"
	}, "web never ended the critical chain: %+v", tl.CriticalChain)
	var names []string
	for _, l := range tl.CriticalChain {
		names = append(names, l.Process+"/"+l.Gates)
	}
	if got := strings.Join(names, " "); got != "cache/ready app/ready web/" {
		t.Fatalf("critical chain %s, want cache/ready app/ready web/", got)
	}
	if c := tl.CriticalChain[0]; c.TimeToReady < 1.5 {
		t.Errorf("cache's time to ready %.3fs, want >= 1.5 s", c.TimeToReady)
	}
	if len(tl.Processes) != 4 {
		t.Errorf("timeline has %d processes, want 4", len(tl.Processes))
	}
}

// TestObserve_ShutdownReport: in a chain front -> app -> db where app
// ignores SIGTERM, the last block of podvisor's log is the shutdown report,
// naming app as SIGKILLed and the others as ended by their signal.
func TestObserve_ShutdownReport(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
shutdown_timeout: 20s
processes:
  db:
    command: ["sleep", "1051"]
  app:
    command: "trap '' TERM; echo up; while :; do sleep 0.05; done"
    depends_on: [db]
    stop: {timeout: 1s}
  front:
    command: ["sleep", "1052"]
    depends_on: [app]
`)
	r.Stdout.WaitFor(t, `app .*\| up`, 10*time.Second)
	obMarkerPid(t, "1052")
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(20 * time.Second); code != 1 {
		t.Errorf("exit %d, want 1 (teardown had to SIGKILL)", code)
	}
	lines := r.Stdout.Lines()
	var block []string
	for i := len(lines) - 1; i >= 0 && strings.Contains(lines[i], `msg="shutdown report"`); i-- {
		block = append([]string{lines[i]}, block...)
	}
	if len(block) != 4 {
		t.Fatalf("last log block has %d shutdown report lines, want 4 (summary and 3 processes):\n%s", len(block), strings.Join(lines, "\n"))
	}
	if !strings.Contains(block[0], "shutdown_timeout=20.000s") || !strings.Contains(block[0], "left=") {
		t.Errorf("summary %q lacks the budget and what was left", block[0])
	}
	want := []string{"process=front ended_by=signal", "process=app ended_by=SIGKILL", "process=db ended_by=signal"}
	for i, w := range want {
		if !strings.Contains(block[i+1], w) {
			t.Errorf("report line %d %q, want %q", i+1, block[i+1], w)
		}
	}
	if !strings.Contains(block[2], "sigkilled=true") || strings.Contains(block[1]+block[3], "sigkilled") {
		t.Errorf("only app must be marked sigkilled:\n%s", strings.Join(block, "\n"))
	}
}

// obRunCLI runs the podvisor binary with args, bounded.
func obRunCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, podvisorBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
	}
	return out.String(), errb.String(), code
}

// TestObserve_TimelineCLI: `podvisor timeline` prints a text Gantt chart
// with every process and the critical chain; --svg writes a well-formed SVG
// naming every process that rsvg-convert renders to a non-blank PNG.
func TestObserve_TimelineCLI(t *testing.T) {
	t.Parallel()
	rsvg, err := exec.LookPath("rsvg-convert")
	if err != nil && os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
		t.Fatal("rsvg-convert is required (Debian package librsvg2-bin)")
	}
	r := startPodvisor(t, `
processes:
  proxy:
    command: "sleep 0.3; touch {{dir}}/proxy.ready; exec sleep 1061"
    ready: {file: "{{dir}}/proxy.ready", start_interval: 20ms}
  app:
    command: ["sleep", "1062"]
    depends_on: [proxy]
  worker:
    command: ["sleep", "1063"]
`, withHTTP())
	eventually(t, 10*time.Second, func() bool { code, _ := r.Get(t, "/readyz"); return code == 200 }, "never ready")

	out, errOut, code := obRunCLI(t, "timeline", "--addr", r.Addr)
	if code != 0 {
		t.Fatalf("podvisor timeline: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"* proxy", "* app", "  worker", "critical chain", "|"} {
		if !strings.Contains(out, want) {
			t.Errorf("text chart lacks %q:\n%s", want, out)
		}
	}

	svgPath := filepath.Join(t.TempDir(), "start.svg")
	if _, errOut, code := obRunCLI(t, "timeline", "--addr", r.Addr, "--svg", svgPath); code != 0 {
		t.Fatalf("podvisor timeline --svg: exit %d: %s", code, errOut)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := svgcheck.Texts(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"proxy", "app", "worker"} {
		if !strings.Contains("\n"+strings.Join(texts, "\n")+"\n", "\n"+name+"\n") {
			t.Errorf("SVG has no label %q: %q", name, texts)
		}
	}
	if rsvg == "" {
		t.Skip("rsvg-convert not installed (Debian package librsvg2-bin): SVG not rendered")
	}
	pngPath := strings.TrimSuffix(svgPath, ".svg") + ".png"
	if msg, err := exec.Command(rsvg, "-o", pngPath, svgPath).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v\n%s", err, msg)
	}
	img, err := svgcheck.DecodePNG(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	if bd := img.Bounds(); bd.Dx() < 800 || bd.Dy() < 100 {
		t.Fatalf("PNG is %dx%d, too small for the chart", bd.Dx(), bd.Dy())
	}
	if n := svgcheck.Colours(img, 20); n < 6 {
		t.Fatalf("PNG has %d colours: blank or nearly so", n)
	}

	// No podvisor: exit 1 with the reason.
	if _, errOut, code := obRunCLI(t, "timeline", "--addr", freeAddr(t)); code != 1 || !strings.Contains(errOut, "no podvisor answering") {
		t.Errorf("timeline against nothing: exit %d, stderr %q", code, errOut)
	}
}
