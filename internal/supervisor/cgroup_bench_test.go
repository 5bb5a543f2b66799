package supervisor_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/cgroup"
	"github.com/podvisor/podvisor/internal/launch"
	"github.com/podvisor/podvisor/internal/proc"

	. "github.com/podvisor/podvisor/internal/supervisor"
)

// BenchmarkLaunchToExecCgroup: what a cgroup costs a start, at the effect:
// from the call to launch.Launcher.Launch to the child's own exec stamp,
// for the same stampchild without resources (plain), with resources whose
// group was made ahead (ahead: the start only enters it, as for a
// process's first start after the config is loaded or a restart), and
// with resources whose group is made on the start's path (onpath: a
// process never restarted, or one whose start came before its group was
// made ahead). The three alternate in every iteration. Reported: each
// one's exec-ms (median), and the medians of each iteration's difference
// to plain (ahead-ms, onpath-ms). PODVISOR_BENCH_RESOURCES replaces the
// resources (YAML flow). Needs root and writable cgroups.
// docs/BENCHMARKS.md section 26.
func BenchmarkLaunchToExecCgroup(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("cgroups need root")
	}
	child := stampChildPath(b)
	rig := newRealRig(b)
	cg := launch.NewCgroups(slog.New(slog.DiscardHandler))
	defer cg.Close()
	l := &launch.Launcher{Reaper: rig.reaper, Sink: rig.sink, BaseEnv: os.Environ(), RuntimeDir: rig.runtimeDir, Log: slog.New(slog.DiscardHandler), Cgroups: cg}
	f := filepath.Join(b.TempDir(), "stamps")
	res := "{memory: {max: 64Mi}, cpu: {max: 500m}, pids: {max: 100}}"
	if r := os.Getenv("PODVISOR_BENCH_RESOURCES"); r != "" {
		res = r // which controllers cost what
	}
	cfg := parseB(b, fmt.Sprintf(`processes:
  plain: {command: [%[1]q, %[2]q, plain, none]}
  ahead: {command: [%[1]q, %[2]q, ahead, none], resources: %[3]s}
  onpath: {command: [%[1]q, %[2]q, onpath, none], resources: %[3]s, restart: {policy: never}}
`, child, f, res))
	made := groupMadeAhead(b)
	launchOne := func(name string, gen uint64) time.Duration {
		b.Helper()
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			b.Fatal(err)
		}
		exited := make(chan struct{})
		t0 := time.Now()
		c, err := l.Launch(cfg.Processes[name], gen, Hooks{Exited: func(proc.Exit) { close(exited) }, Ready: func(string) {}, Status: func(string) {}})
		if err != nil {
			b.Fatal(err)
		}
		waitLines(b, f, 1, 10*time.Second)
		d := readStamps(b, f).at(b, name, "exec").Sub(t0)
		_ = c.Signal(syscall.SIGKILL)
		<-exited
		return d
	}
	launchOne("ahead", 1) // its exit makes ahead.2's group ahead
	var plain, ahead, onpath, dAhead, dOnpath []time.Duration
	gen := uint64(2)
	for b.Loop() {
		// The group made ahead is there before the start, as when the
		// config was loaded a moment before, or the process's last exit.
		deadline := time.Now().Add(10 * time.Second)
		for !made("ahead", gen) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		p := launchOne("plain", gen)
		a := launchOne("ahead", gen)
		o := launchOne("onpath", gen)
		plain, ahead, onpath = append(plain, p), append(ahead, a), append(onpath, o)
		dAhead, dOnpath = append(dAhead, a-p), append(dOnpath, o-p)
		gen++
	}
	b.ReportMetric(ms(median(plain)), "plain-exec-ms")
	b.ReportMetric(ms(median(ahead)), "ahead-exec-ms")
	b.ReportMetric(ms(median(onpath)), "onpath-exec-ms")
	b.ReportMetric(ms(median(dAhead)), "ahead-ms")
	b.ReportMetric(ms(median(dOnpath)), "onpath-ms")
}

// groupMadeAhead returns whether the group of incarnation gen of name
// exists (v1: in the memory hierarchy; v2: beside podvisor's leaf).
func groupMadeAhead(b *testing.B) func(name string, gen uint64) bool {
	v2, v1, err := cgroup.OwnPaths("/proc/self/cgroup")
	if err != nil {
		b.Fatal(err)
	}
	var dir, prefix string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dir, prefix = filepath.Join("/sys/fs/cgroup", strings.TrimSuffix(v2, "/podvisor")), "p-"
	} else {
		dir = filepath.Join("/sys/fs/cgroup/memory", v1["memory"])
		if _, err := os.Stat(dir); err != nil {
			dir = "/sys/fs/cgroup/memory"
		}
		dir = filepath.Join(dir, "podvisor-"+strconv.Itoa(os.Getpid()))
	}
	return func(name string, gen uint64) bool {
		_, err := os.Stat(filepath.Join(dir, prefix+name+"."+strconv.FormatUint(gen, 10)))
		return err == nil
	}
}
