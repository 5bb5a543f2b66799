package supervisor

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/health"
)

// TestConditionTable walks every cell of the table in docs/configuration.md
// ("Process types, conditions and checks"): x, of each type with each set
// of checks, exits 0 at 1s; its ready check passes from passAt on. An
// early dependent e_COND depends on x alone and shows when COND first
// holds; a late one l_COND also waits for gate (completed at 2s) and shows
// whether COND still holds after x's exit. hold, a job that runs on, keeps
// the run from ending when x is a job.
func TestConditionTable(t *testing.T) {
	const never = "-"
	type want map[string]string // dependent -> start offset, or never
	for _, c := range []struct {
		name   string
		x      string // x's keys beyond command
		passAt time.Duration
		want   want
	}{
		{"service", "restart: never", 400 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "0s", "l_started": never, "l_ready": never}},
		{"service ready", "restart: never\n    ready: {exec: [r], start_interval: 100ms}", 400 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "400ms", "l_started": never, "l_ready": never}},
		{"service ready after exit", "restart: never\n    ready: {exec: [r], start_interval: 100ms}", 1500 * time.Millisecond,
			want{"e_started": "0s", "e_ready": never, "l_started": never, "l_ready": never}},
		{"service startup ready", "restart: never\n    startup: {exec: [s], start_interval: 100ms}\n    ready: {exec: [r], start_interval: 100ms}", 400 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "400ms", "l_started": never, "l_ready": never}},
		{"service remain_after_exit", "restart: never\n    remain_after_exit: true", 0,
			want{"e_started": "0s", "e_ready": "0s", "l_started": "2s", "l_ready": "2s"}},
		{"oneshot", "type: oneshot", 0,
			want{"e_started": "0s", "e_ready": "1s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"oneshot ready", "type: oneshot\n    ready: {exec: [r], start_interval: 100ms}", 400 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "1s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"oneshot ready after exit", "type: oneshot\n    ready: {exec: [r], start_interval: 100ms}", 1500 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "1.5s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"oneshot ready never", "type: oneshot\n    ready: {exec: [r], start_interval: 100ms}", time.Hour,
			want{"e_started": "0s", "e_ready": never, "e_completed": "1s", "l_started": "2s", "l_ready": never, "l_completed": "2s"}},
		{"oneshot startup ready after exit", "type: oneshot\n    startup: {exec: [s], start_interval: 100ms}\n    ready: {exec: [r], start_interval: 100ms}", 1500 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "1.5s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"oneshot ready log", "type: oneshot\n    ready: {log: READY}", 0,
			want{"e_started": "0s", "e_ready": "1s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"job", "type: job", 0,
			want{"e_started": "0s", "e_ready": "1s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"job ready", "type: job\n    ready: {exec: [r], start_interval: 100ms}", 400 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "400ms", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"job ready after exit", "type: job\n    ready: {exec: [r], start_interval: 100ms}", 1500 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "1.5s", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
		{"job startup ready", "type: job\n    startup: {exec: [s], start_interval: 100ms}\n    ready: {exec: [r], start_interval: 100ms}", 400 * time.Millisecond,
			want{"e_started": "0s", "e_ready": "400ms", "e_completed": "1s", "l_started": "2s", "l_ready": "2s", "l_completed": "2s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var b strings.Builder
				fmt.Fprintf(&b, "processes:\n  x:\n    command: [x]\n    %s\n", c.x)
				b.WriteString("  gate: {command: [gate], type: oneshot}\n  hold: {command: [hold], type: job}\n")
				for _, d := range []string{"e", "l"} {
					for _, cond := range []string{"started", "ready", "completed"} {
						name := d + "_" + cond
						if _, ok := c.want[name]; !ok {
							continue
						}
						deps := "x: " + cond
						if d == "l" {
							deps += ", gate: completed"
						}
						fmt.Fprintf(&b, "  %s: {command: [%s], depends_on: {%s}}\n", name, name, deps)
					}
				}
				t0 := time.Now()
				h := startWithChecks(t, b.String(), map[string]script{
					"x":    {exitAfter: time.Second},
					"gate": {exitAfter: 2 * time.Second},
				}, map[string]func(int) health.Result{
					"x/ready":   func(int) health.Result { return health.Result{OK: time.Since(t0) >= c.passAt} },
					"x/startup": func(int) health.Result { return health.Result{OK: true} },
				})
				time.Sleep(3 * time.Second)
				for name, at := range c.want {
					got := never
					for _, e := range h.f.events() {
						if off, ok := strings.CutSuffix(e, " start "+name); ok {
							got = off
							break
						}
					}
					if got != at {
						t.Errorf("%s started at %s, want %s; events:\n%s", name, got, at, strings.Join(h.f.events(), "\n"))
					}
				}
				h.sigs <- syscall.SIGTERM
				h.wait(time.Minute)
			})
		})
	}
}

// TestCompletedStopCommandRunsAtTeardown: a completed oneshot's
// stop.command runs in the teardown after its dependents exited and before
// its dependencies are stopped (issue 35, item 4); a scheduled oneshot's
// does not (it is idle between runs).
func TestCompletedStopCommandRunsAtTeardown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  db: {command: [db]}
  init:
    command: [init]
    type: oneshot
    depends_on: [db]
    stop: {command: [unmount], timeout: 10s}
  tick:
    command: [tick]
    type: oneshot
    schedule: {every: 1h}
    stop: {command: [never]}
  app: {command: [app], depends_on: {init: completed}}
`, map[string]script{
			"init": {exitAfter: time.Second, hook: 2 * time.Second},
			"tick": {exitAfter: time.Second},
			"app":  {stopDelay: 500 * time.Millisecond},
			"db":   {},
		})
		time.Sleep(3 * time.Second)
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.ExitCode() != 0 {
			t.Errorf("exit %d", o.ExitCode())
		}
		h.mustHave("3.5s exit app 143", "3.5s stopcmd init", "5.5s stopcmd init done", "5.5s signal db TERM")
		h.mustNotHaveSuffix("stopcmd tick")
	})
}
