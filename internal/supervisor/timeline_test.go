package supervisor

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/timeline"
)

// startObserved is start with a real timeline recorder and an OOM detector.
func startObserved(t *testing.T, yml string, scripts map[string]script, oom OOMDetector) (*harness, *timeline.Recorder) {
	t.Helper()
	cfg := parse(t, yml)
	f := newFake(scripts)
	tl := timeline.New(timeline.FromConfig(cfg), 0, time.Now())
	sup, err := New(Options{Config: cfg, Launcher: f, Checkers: f.checkers, OnEvent: tl.OnEvent, OOM: oom})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}
	go func() { h.out <- sup.Run(ctx, h.sigs) }()
	t.Cleanup(cancel)
	return h, tl
}

func incarnationIn(t *testing.T, d timeline.Doc, name string) timeline.Incarnation {
	t.Helper()
	for _, p := range d.Processes {
		if p.Name == name && len(p.Incarnations) > 0 {
			return p.Incarnations[len(p.Incarnations)-1]
		}
	}
	t.Fatalf("no incarnation of %s in %+v", name, d.Processes)
	return timeline.Incarnation{}
}

// offset is t's distance from t0, or -1 for nil.
func offset(t *time.Time, t0 time.Time) time.Duration {
	if t == nil {
		return -1
	}
	return t.Sub(t0)
}

// TestTimelineHooks: every call site reports at the instant it acts: start,
// readiness, stop request with its reason, stop.command, stop signal,
// SIGKILL at stop.timeout, exit; the shutdown report names the stubborn
// process as SIGKILLed.
func TestTimelineHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		oom := &countingOOM{}
		h, tl := startObserved(t, `
shutdown_timeout: 30s
processes:
  db:
    command: [db]
    stop: {command: [db-stop], timeout: 5s}
  app:
    command: [app]
    depends_on: [db]
    stop: {timeout: 2s}
`, map[string]script{"db": {stopDelay: 100 * time.Millisecond}, "app": {ignoreTerm: true}}, oom)
		t0 := h.f.t0
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		d := tl.Doc(time.Now())

		app := incarnationIn(t, d, "app")
		for what, c := range map[string]struct {
			got  *time.Time
			want time.Duration
		}{
			"app spawned": {app.Spawned, 0}, "app started": {app.Started, 0}, "app ready": {app.Ready, 0},
			"app stop requested": {app.StopRequested, time.Second}, "app signal": {app.SignalSent, time.Second},
			"app SIGKILL": {app.KillSent, 3 * time.Second}, "app exited": {app.Exited, 3 * time.Second},
		} {
			if got := offset(c.got, t0); got != c.want {
				t.Errorf("%s at %v, want %v", what, got, c.want)
			}
		}
		if app.StopReason != "teardown: received terminated" || app.Signal != "SIGTERM" || app.ExitCode == nil || *app.ExitCode != 137 || app.ExitReason != "" {
			t.Errorf("app incarnation %+v", app)
		}
		db := incarnationIn(t, d, "db")
		for what, c := range map[string]struct {
			got  *time.Time
			want time.Duration
		}{
			"db stop requested": {db.StopRequested, 3 * time.Second}, "db stop.command began": {db.StopCommandBegan, 3 * time.Second},
			"db stop.command ended": {db.StopCommandEnded, 3 * time.Second}, "db signal": {db.SignalSent, 3 * time.Second},
			"db exited": {db.Exited, 3100 * time.Millisecond},
		} {
			if got := offset(c.got, t0); got != c.want {
				t.Errorf("%s at %v, want %v", what, got, c.want)
			}
		}
		sd := d.Shutdown
		if sd == nil || sd.Ended == nil || offset(sd.Ended, t0) != 3100*time.Millisecond || sd.BudgetSeconds != 30 {
			t.Fatalf("shutdown %+v", sd)
		}
		if len(sd.Processes) != 2 || sd.Processes[0].Process != "app" || sd.Processes[0].EndedBy != "SIGKILL" || !sd.Processes[0].SIGKILLed ||
			sd.Processes[1].Process != "db" || sd.Processes[1].EndedBy != "signal" || sd.Processes[1].SIGKILLed {
			t.Errorf("shutdown processes %+v", sd.Processes)
		}
		if n := oom.calls.Load(); n != 0 {
			t.Errorf("the OOM detector was asked %d times about a SIGKILL podvisor sent itself", n)
		}
	})
}

type countingOOM struct {
	calls atomic.Int32
	kills atomic.Int32 // OOM kills not yet claimed
}

func (c *countingOOM) Claim() bool {
	c.calls.Add(1)
	if c.kills.Load() > 0 {
		c.kills.Add(-1)
		return true
	}
	return false
}

// TestOOMKilledReason: a death with code 137 while the cgroup counted an OOM
// kill is OOMKilled in the snapshot and the timeline; a later one without a
// new count is a plain exit.
func TestOOMKilledReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		oom := &countingOOM{}
		oom.kills.Store(1)
		h, tl := startObserved(t, `
processes:
  hog:
    command: [hog]
    restart: {policy: on-failure, backoff: 1s}
  steady:
    command: [steady]
`, map[string]script{"hog": {exitAfter: time.Second, exitCodes: []int{137}}}, oom)
		time.Sleep(1500 * time.Millisecond)
		var hog ProcessSnapshot
		for _, p := range h.sup.Snapshot().Processes {
			if p.Name == "hog" {
				hog = p
			}
		}
		if hog.Reason != ReasonOOMKilled || hog.OOMKills != 1 || hog.State != "backoff" {
			t.Errorf("hog %+v, want OOMKilled, 1 kill, backoff", hog)
		}
		if in := incarnationIn(t, tl.Doc(time.Now()), "hog"); in.ExitReason != ReasonOOMKilled || in.Generation != 1 {
			t.Errorf("hog incarnation %+v, want generation 1 OOMKilled", in)
		}
		time.Sleep(2 * time.Second) // the second incarnation dies too, no new OOM count
		for _, p := range h.sup.Snapshot().Processes {
			if p.Name == "hog" && (p.Reason != "exited with code 137" || p.OOMKills != 1) {
				t.Errorf("hog after a plain 137: %+v", p)
			}
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
