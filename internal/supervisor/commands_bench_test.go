package supervisor_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/podvisor/podvisor/internal/supervisor"
)

// restartChild stamps the instant its main runs (start-PID) and, on SIGTERM,
// the instant it exits (exit-PID), in $PV_STAMP_DIR.
func restartChild() {
	dir := os.Getenv("PV_STAMP_DIR")
	stamp := func(what string) {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d", what, os.Getpid())), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
	}
	stamp("start")
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	stamp("exit")
	os.Exit(0)
}

func stampAt(b *testing.B, dir, what string, pid int) time.Time {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("%s-%d", what, pid))
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && len(data) > 0 {
			ns, err := strconv.ParseInt(string(data), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return time.Unix(0, ns)
		}
		if time.Now().After(deadline) {
			b.Fatalf("no stamp %s", path)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkRestartCommand measures `podvisor restart NAME` of a process that
// exits at once on SIGTERM, at the child: from the old incarnation's last
// instant (its exit stamp) to the new incarnation's first (its main). The
// floor is the same binary's fork+exec+runtime start measured in the same
// run (from just before cmd.Start to its start stamp): what any supervisor
// pays. The target is restart-ms/op < 5.
func BenchmarkRestartCommand(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	rig := newRealRig(b)
	sup := rig.supervisor(b, fmt.Sprintf("processes:\n  r:\n    command: [%q]\n    env: {%s: restart-stamp, PV_STAMP_DIR: %q}\n    stop: {timeout: 5s}\n", self, benchChildEnv, dir))
	sigs := make(chan os.Signal, 1)
	done := make(chan Outcome, 1)
	go func() { done <- sup.Run(context.Background(), sigs) }()
	pidOf := func() int {
		for _, p := range sup.Snapshot().Processes {
			if p.State == "running" {
				return p.Pid
			}
		}
		return 0
	}
	if !waitFor(sup, func(Snapshot) bool { return pidOf() != 0 }, 10*time.Second) {
		b.Fatal("not running")
	}
	var gaps, floors []time.Duration
	for b.Loop() {
		old := pidOf()
		stampAt(b, dir, "start", old) // its signal handler is installed
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res := sup.Command(ctx, "restart", Request{Names: []string{"r"}})
		cancel()
		if !res.OK {
			b.Fatalf("restart: %+v", res)
		}
		now := pidOf()
		gaps = append(gaps, stampAt(b, dir, "start", now).Sub(stampAt(b, dir, "exit", old)))

		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), benchChildEnv+"=restart-stamp", "PV_STAMP_DIR="+dir)
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		floors = append(floors, stampAt(b, dir, "start", cmd.Process.Pid).Sub(t0))
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	sigs <- syscall.SIGTERM
	<-done
	slices.Sort(gaps)
	slices.Sort(floors)
	b.ReportMetric(ms(gaps[len(gaps)/2]), "restart-p50-ms")
	b.ReportMetric(ms(gaps[len(gaps)*9/10]), "restart-p90-ms")
	b.ReportMetric(ms(floors[len(floors)/2]), "exec-floor-p50-ms")
}
