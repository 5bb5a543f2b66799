package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Per-process resources through cgroups (docs/resources.md), live on this
// host's cgroup hierarchy.

// needCgroups skips when this host gives no writable cgroup v1 memory,
// cpu and pids hierarchies (or a v2 one) to root.
func needCgroups(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return
	}
	for _, c := range []string{"memory", "cpu", "pids"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, "cgroup.procs")); err != nil {
			t.Skip("no cgroup v1 ", c, " hierarchy: ", err)
		}
	}
}

// resStatus is a process's entry of /status with the resource fields.
type resStatus struct {
	Name        string `json:"name"`
	State       string `json:"state"`
	Pid         int    `json:"pid"`
	Reason      string `json:"reason"`
	OOMKills    int    `json:"oom_kills"`
	NotEnforced string `json:"resources_not_enforced"`
	Resources   *struct {
		CPUSeconds  float64 `json:"cpu_seconds"`
		MemoryBytes uint64  `json:"memory_bytes"`
	} `json:"resources"`
}

// endRun stops r with SIGTERM, so that podvisor removes its cgroups (the
// harness's SIGKILL would leave them on the host).
func endRun(t *testing.T, r *Run) {
	t.Helper()
	t.Cleanup(func() {
		r.Signal(syscall.SIGTERM)
		r.Wait(scaled(15 * time.Second))
	})
}

func resProc(t *testing.T, r *Run, name string) resStatus {
	t.Helper()
	var st struct {
		Processes []resStatus `json:"processes"`
	}
	raw := getJSON(t, r, "/status", &st)
	for _, p := range st.Processes {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no %s in /status:\n%s", name, raw)
	return resStatus{}
}

// TestResourcesMemoryOOM: a process that allocates past its memory.max
// is OOM-killed alone: /status names the kill, its neighbour runs on.
func TestResourcesMemoryOOM(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	m := ffMarker()
	r := ffStartHTTP(t, `
processes:
  hog:
    command: "head -c 2000000000 /dev/zero | tail > /dev/null"
    resources: {memory: {max: 32Mi}}
    restart: {policy: always, backoff: 1h}
  neighbour:
    command: [sleep, '`+m+`']
`)
	endRun(t, r)
	neighbour := ffPidOf(t, m, scaled(5*time.Second))
	var hog resStatus
	eventually(t, scaled(30*time.Second), func() bool {
		hog = resProc(t, r, "hog")
		return hog.OOMKills > 0
	}, "hog was never OOM-killed: %+v\n%s", ffLazy(func() string { return strconv.Itoa(hog.OOMKills) }), r.Stdout)
	if hog.Reason != "OOMKilled" {
		t.Errorf("hog's reason %q, want OOMKilled", hog.Reason)
	}
	if ffGone(neighbour) {
		t.Error("the neighbour died with the hog")
	}
	if n := resProc(t, r, "neighbour"); n.State != "running" || n.Pid != neighbour {
		t.Errorf("neighbour %+v, want running as %d", n, neighbour)
	}
}

// TestResourcesForkBomb (docs/reliability.md, D7b): podvisor runs in a pids cgroup
// with a limit; a fork bomb in a process whose own pids limit is clamped
// below podvisor's budget is refused inside its cgroup, /livez answers,
// the refusals are named, and SIGTERM ends everything in time.
func TestResourcesForkBomb(t *testing.T) {
	needCgroups(t)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("the harness's pids cgroup is v1")
	}
	t.Parallel()
	cg := ffCgroup(t, "pids")
	ffWrite(t, cg, "pids.max", []byte("400"), 0)
	bm := ffMarker()
	r := ffStartHTTP(t, `
shutdown_timeout: 10s
processes:
  bomb:
    command: `+ffq(`while :; do sleep `+bm+` 2>/dev/null & done`)+`
    resources: {pids: {max: 100000}}
  steady:
    command: [sleep, '1000']
`, withWrapper("sh", "-c", `echo $$ > `+cg+`/cgroup.procs && exec "$@"`, "sh"))
	pv := r.Pid()
	events := filepath.Join(cg, "podvisor-"+strconv.Itoa(pv), "bomb.1", "pids.events")
	eventually(t, scaled(20*time.Second), func() bool {
		s := strings.TrimSpace(readFile(events))
		return strings.HasPrefix(s, "max ") && s != "max 0"
	}, "the bomb's own pids limit was never hit: %q", ffLazy(func() string { return readFile(events) }))
	if got := strings.TrimSpace(readFile(filepath.Join(cg, "podvisor-"+strconv.Itoa(pv), "bomb.1", "pids.max"))); got != "336" {
		t.Errorf("bomb's pids.max %s, want 336 (podvisor's 400 less its reserve of 64)", got)
	}
	for range 5 {
		if code, _ := r.Get(t, "/livez"); code != 200 {
			t.Fatalf("/livez answered %d during the bomb", code)
		}
	}
	r.Signal(syscall.SIGTERM)
	if _, took := r.Wait(scaled(15 * time.Second)); took > scaled(12*time.Second) {
		t.Errorf("teardown took %v, past shutdown_timeout", took)
	}
	eventually(t, scaled(10*time.Second), func() bool { return len(pidsWithArg(bm)) == 0 }, "bomb processes outlived podvisor")
}

// TestResourcesCPUMax: a CPU-bound process under cpu.max 200m uses about
// 20% of a CPU, as /status (from its cgroup) counts it: over at least 5 s,
// at most 20% plus one period and a tolerance of 5 points for
// the accounting's granularity, and more than nothing.
func TestResourcesCPUMax(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  spin:
    command: "while :; do :; done"
    resources: {cpu: {max: 200m}}
`)
	endRun(t, r)
	var p0 resStatus
	eventually(t, scaled(5*time.Second), func() bool {
		p0 = resProc(t, r, "spin")
		return p0.Resources != nil && p0.Resources.CPUSeconds > 0
	}, "spin never showed CPU time")
	t0 := time.Now()
	var p1 resStatus
	eventually(t, scaled(30*time.Second), func() bool {
		p1 = resProc(t, r, "spin")
		return time.Since(t0) >= 5*time.Second && p1.Resources != nil
	}, "no second sample")
	wall := time.Since(t0).Seconds()
	used := p1.Resources.CPUSeconds - p0.Resources.CPUSeconds
	if share := used / wall; share > 0.25+0.1/wall || share <= 0.01 {
		t.Errorf("spin used %.3f s of CPU over %.3f s (%.0f%%), want about 20%%", used, wall, 100*share)
	}
}

// TestResourcesStopKillsEscapedDaemon: a daemon that left its process
// group and session is gone after its process's stop: the final SIGKILL
// covers the cgroup, and podvisor says what it killed that way.
func TestResourcesStopKillsEscapedDaemon(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	dm := ffMarker()
	r := ffStartHTTP(t, `
control: "{{dir}}/c.sock"
processes:
  app:
    command: `+ffq(`setsid sleep `+dm+` & sleep 1000`)+`
    resources: {memory: {max: 64Mi}}
    stop: {timeout: 1s}
  other:
    command: [sleep, '1000']
`)
	endRun(t, r)
	daemon := ffPidOf(t, dm, scaled(5*time.Second))
	// The pid is found as soon as setsid(1) runs, which may be before it
	// has called setsid(2): wait for the new session, not a snapshot.
	app := resProc(t, r, "app").Pid
	eventually(t, scaled(5*time.Second), func() bool {
		sid, err := unix.Getsid(daemon)
		pg, _ := syscall.Getpgid(daemon)
		return err == nil && sid == daemon && pg != app
	}, "the daemon did not leave the process group and session: the test proves nothing")
	mustCtl(t, r, 0, "stop", "app")
	eventually(t, scaled(10*time.Second), func() bool { return ffGone(daemon) }, "the escaped daemon %d outlived its process's stop", daemon)
	r.Stdout.WaitFor(t, `killed the process's cgroup.*process=app.*processes=1`, scaled(5*time.Second))
	if st := resProc(t, r, "other"); st.State != "running" {
		t.Errorf("other %+v", st)
	}
}

// TestResourcesNotEnforced: where podvisor cannot make cgroups (here a
// read-only /sys/fs/cgroup in a mount namespace of its own, as in a plain
// container), the process starts anyway, podvisor says once which limits
// are not enforced and why, and /status shows it.
func TestResourcesNotEnforced(t *testing.T) {
	needCgroups(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare: ", err)
	}
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  app:
    command: [sleep, '1000']
    resources: {memory: {max: 64Mi}, pids: {max: 10}}
`, withWrapper("unshare", "-m", "sh", "-c", `for d in /sys/fs/cgroup/*/; do mount -o remount,ro,bind "$d" || exit 9; done; exec "$@"`, "sh"))
	var p resStatus
	eventually(t, scaled(5*time.Second), func() bool {
		p = resProc(t, r, "app")
		return p.State == "running"
	}, "app never ran")
	if !strings.Contains(p.NotEnforced, "read-only") {
		b, _ := json.Marshal(p)
		t.Errorf("/status does not say why the limits are not enforced: %s", b)
	}
	r.Stdout.WaitFor(t, `resources are not enforced`, scaled(5*time.Second))
}
