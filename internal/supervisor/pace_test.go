package supervisor

import (
	"context"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

// The relist schedule on a made-up clock: ticks at origin+phase+k*period,
// and a change noticed at the first tick strictly after it.
func TestRelistAfter(t *testing.T) {
	origin := time.Unix(1000, 0)
	ms := func(n int) time.Time { return origin.Add(time.Duration(n) * time.Millisecond) }
	c := newRelist(Pace{Period: time.Second, Phase: 300 * time.Millisecond}, origin)
	for _, tc := range []struct {
		at, want int // ms after origin
	}{
		{0, 300},     // before the first tick: the first
		{299, 300},   // just before it
		{300, 1300},  // at a tick: the relist that saw it began before it
		{301, 1300},  // just after: the whole period
		{1299, 1300}, // the next
		{5300, 6300}, // far on
		{5301, 6300}, // far on
		{-5000, 300}, // before the run (a time from an earlier clock)
		{86400300, 86401300},
	} {
		if got := c.after(ms(tc.at)); !got.Equal(ms(tc.want)) {
			t.Errorf("after(+%dms) = +%v, want +%dms", tc.at, got.Sub(origin), tc.want)
		}
	}
	// The phase is (0, period]: 0 or too large is one period.
	for _, ph := range []time.Duration{0, -time.Second, 3 * time.Second} {
		if got := newRelist(Pace{Period: time.Second, Phase: ph}, origin).after(origin); !got.Equal(ms(1000)) {
			t.Errorf("phase %v: first tick at +%v, want +1s", ph, got.Sub(origin))
		}
	}
	// Off: a change is noticed when it happens.
	off := newRelist(Pace{}, origin)
	if off.on() || !off.after(ms(1234)).Equal(ms(1234)) {
		t.Errorf("no period: after = %v, want the time itself", off.after(ms(1234)).Sub(origin))
	}
}

// When a dependent may act on each condition: started and completed at the
// tick after the change; ready (a gating startupProbe) when the probe
// passed, but not before the second tick after the start.
func TestRelistNoticedAt(t *testing.T) {
	origin := time.Unix(1000, 0)
	ms := func(n int) time.Time { return origin.Add(time.Duration(n) * time.Millisecond) }
	c := newRelist(Pace{Period: time.Second, Phase: 500 * time.Millisecond}, origin)
	rec := func(state State, started, ready, exited int) *record {
		r := newRecord(&config.Process{Name: "s"}, 0)
		r.state = state
		r.cur.startedAt, r.cur.readyAt, r.exitedAt = ms(started), ms(ready), ms(exited)
		return r
	}
	for _, tc := range []struct {
		name string
		r    *record
		cond graph.Condition
		want int
	}{
		{"started", rec(Running, 100, 0, 0), graph.Started, 500},
		{"started just after a tick", rec(Running, 501, 0, 0), graph.Started, 1500},
		{"completed init container", rec(Completed, 100, 0, 900), graph.Completed, 1500},
		{"completed counts from its exit for started too", rec(Completed, 100, 0, 1600), graph.Started, 2500},
		{"probe passed before the second tick", rec(Running, 100, 700, 0), graph.Ready, 1500},
		{"probe passed after the second tick", rec(Running, 100, 2200, 0), graph.Ready, 2200},
	} {
		if got := c.noticedAt(tc.r, tc.cond); !got.Equal(ms(tc.want)) {
			t.Errorf("%s: noticed at +%v, want +%dms", tc.name, got.Sub(origin), tc.want)
		}
	}
}

// A pod at the kubelet's pace on the fake clock: relist ticks at 300ms,
// 1.3s, 2.3s...; each step waits for the tick after the change it follows;
// at full speed the same pod takes each step at once.
const pacedPod = `
shutdown_timeout: 10s
processes:
  init:
    type: oneshot
    command: [i]
  side:
    command: [s]
    sidecar: true
    depends_on: {init: completed}
  app:
    type: job
    command: [a]
    depends_on: {side: started}
`

func TestPaceLoop(t *testing.T) {
	scripts := map[string]script{
		"init": {exitAfter: 200 * time.Millisecond},
		"side": {stopDelay: 100 * time.Millisecond},
		"app":  {exitAfter: 150 * time.Millisecond},
	}
	for _, tc := range []struct {
		name string
		pace Pace
		want []string
	}{
		{"node", Pace{Period: time.Second, Phase: 300 * time.Millisecond, Noticed: []string{"init", "side", "app"}},
			[]string{"0s start init", "200ms exit init 0", "300ms start side", "1.3s start app", "1.45s exit app 0",
				"2.3s signal side TERM", "2.4s exit side 143"}},
		{"fast", Pace{},
			[]string{"0s start init", "200ms exit init 0", "200ms start side", "200ms start app", "350ms exit app 0",
				"350ms signal side TERM", "450ms exit side 143"}},
		// Only what the kubelet learns at a relist is paced.
		{"node, app not noticed", Pace{Period: time.Second, Phase: 300 * time.Millisecond, Noticed: []string{"init", "side"}},
			[]string{"300ms start side", "1.3s start app", "1.45s exit app 0", "1.45s signal side TERM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startPaced(t, pacedPod, scripts, tc.pace)
				o := h.wait(time.Minute)
				h.mustHave(tc.want...)
				if o.Reason != ReasonJobsDone {
					t.Errorf("outcome %v, want the jobs done", o)
				}
			})
		})
	}
}

// A restart waits for the relist after the exit, and for its back-off.
func TestPaceRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPaced(t, `
processes:
  side:
    command: [s]
    restart: {policy: always, backoff: 100ms}
`, map[string]script{"side": {exitAfter: 500 * time.Millisecond, firstOnly: true}},
			Pace{Period: time.Second, Phase: 300 * time.Millisecond, Noticed: []string{"side"}})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		h.mustHave("0s start side", "500ms exit side 0", "1.3s start side")
		h.stop()
		h.wait(time.Minute)
	})
}

// startPaced is start with Options.Pace.
func startPaced(t *testing.T, yml string, scripts map[string]script, pace Pace) *harness {
	t.Helper()
	f := newFake(scripts)
	sup, err := New(Options{Config: parse(t, yml), Launcher: f, Checkers: f.checkers, Pace: pace})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}
	go func() { h.out <- sup.Run(ctx, h.sigs) }()
	t.Cleanup(cancel)
	return h
}
