package server

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// A condition's time moves when, and only when, its status changes: a
// flip back and forth is stamped at each flip, never at the first True.
func TestConditionTimesFlips(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []struct {
		ready bool
		want  time.Time // Ready's lastTransitionTime after the step
	}{
		{false, at(0)}, {true, at(1)}, {true, at(1)}, {false, at(3)}, {false, at(3)}, {true, at(5)}, {true, at(5)},
	}
	var c conditionTimes
	for i, s := range steps {
		conds := c.observe([numConds]bool{true, true, s.ready, s.ready}, at(i))
		if len(conds) != int(numConds) {
			t.Fatalf("step %d: %d conditions, want %d", i, len(conds), numConds)
		}
		for j, want := range []PodCondition{
			{Type: "PodReadyToStartContainers", Status: "True", LastTransitionTime: at(0)},
			{Type: "Initialized", Status: "True", LastTransitionTime: at(0)},
			{Type: "ContainersReady", Status: trueFalse(s.ready), LastTransitionTime: s.want},
			{Type: "Ready", Status: trueFalse(s.ready), LastTransitionTime: s.want},
		} {
			if conds[j] != want {
				t.Errorf("step %d: %+v, want %+v", i, conds[j], want)
			}
		}
	}
}

// Seeded random sequences: for every condition, lastTransitionTime changes
// iff its status changes, and then it is the observation's time.
func TestConditionTimesRandom(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 38))
		var c conditionTimes
		var prev []PodCondition
		now := t0
		for step := range 500 {
			now = now.Add(time.Duration(1+rng.IntN(1000)) * time.Millisecond)
			var st [numConds]bool
			for i := range st {
				st[i] = rng.IntN(4) == 0 != (prev != nil && prev[i].Status == "True") // flip one time in four
			}
			conds := c.observe(st, now)
			for i, cond := range conds {
				if cond.Status != trueFalse(st[i]) {
					t.Fatalf("seed %d step %d: %s is %s, want %s", seed, step, cond.Type, cond.Status, trueFalse(st[i]))
				}
				if prev == nil {
					if !cond.LastTransitionTime.Equal(now) {
						t.Fatalf("seed %d: first %s at %v, want %v", seed, cond.Type, cond.LastTransitionTime, now)
					}
					continue
				}
				changed := cond.Status != prev[i].Status
				moved := !cond.LastTransitionTime.Equal(prev[i].LastTransitionTime)
				if changed != moved || changed && !cond.LastTransitionTime.Equal(now) {
					t.Fatalf("seed %d step %d: %s %s->%s, time %v->%v (now %v): the time must move iff the status changes, to now",
						seed, step, cond.Type, prev[i].Status, cond.Status, prev[i].LastTransitionTime, cond.LastTransitionTime, now)
				}
			}
			prev = conds
		}
	}
}

// podSnap is a snapshot of a pod with one regular container, app, ready
// or not; its ready time stays the first one, as the supervisor's does
// when a readiness probe fails and passes again.
func podSnap(ready bool) supervisor.Snapshot {
	return supervisor.Snapshot{Phase: "running", Ready: ready, Processes: []supervisor.ProcessSnapshot{
		{Name: "app", Type: "service", State: "running", Pid: 42, Up: true, Ready: ready, StartedAt: t0, ReadyAt: t1},
	}}
}

// tickClock is a clock the test feeds: each observation of the tracker
// takes one tick, so a test knows which time stamps which snapshot.
type tickClock chan time.Time

func (c tickClock) now() time.Time { return <-c }

// The tracker stamps flips as they are published, not when /status is
// polled: Ready goes True, False and True again between two polls, and the
// second poll shows the last flip's time, not the first ready time. Both
// handlers (the HTTP port's and the control socket's) show the same.
func TestPodTrackerBetweenPolls(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	src := newChangingSource(podSnap(false))
	clock := make(tickClock)
	tr := NewPodTracker(PodRoles{Containers: []string{"app"}, RestartPolicy: "Always"}, src, clock.now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)
	clock <- at(10) // the first observation

	opts := Options{Pod: tr}
	handlers := map[string]http.Handler{"HTTP": New(src, NewMetrics(), opts), "control": StatusHandler(src, NewMetrics(), opts)}
	// Each publish is observed (its tick taken) before the next poll, so
	// a poll finds nothing new to observe and takes no tick.
	poll := func(name string) PodStatus {
		t.Helper()
		return pollStatus(t, handlers[name])
	}
	ready := func(ps PodStatus) PodCondition { return ps.Conditions[condReady] }

	if c := ready(poll("HTTP")); c.Status != "False" || !c.LastTransitionTime.Equal(at(10)) {
		t.Fatalf("before ready: %+v, want False since %v", c, at(10))
	}
	src.publish(podSnap(true))
	clock <- at(20)
	if c := ready(poll("control")); c.Status != "True" || !c.LastTransitionTime.Equal(at(20)) {
		t.Fatalf("ready: %+v, want True since %v", c, at(20))
	}
	// Unready and ready again with no poll in between.
	src.publish(podSnap(false))
	clock <- at(30)
	src.publish(podSnap(true))
	clock <- at(40)
	for _, name := range []string{"HTTP", "control"} {
		ps := poll(name)
		if c := ready(ps); c.Status != "True" || !c.LastTransitionTime.Equal(at(40)) {
			t.Errorf("%s after a flip between polls: %+v, want True since %v (the flip back), not %v (the first ready)", name, c, at(40), at(20))
		}
		if c := ps.Conditions[condContainersReady]; c.Status != "True" || !c.LastTransitionTime.Equal(at(40)) {
			t.Errorf("%s ContainersReady: %+v, want True since %v", name, c, at(40))
		}
		if c := ps.Conditions[condReadyToStart]; c.Status != "True" || !c.LastTransitionTime.Equal(at(10)) {
			t.Errorf("%s PodReadyToStartContainers: %+v, want True since %v", name, c, at(10))
		}
	}
	// Once the tracker has stopped, /status shows its last observation.
	cancel()
	<-tr.done
	if c := ready(poll("HTTP")); c.Status != "True" || !c.LastTransitionTime.Equal(at(40)) {
		t.Errorf("after Run returned: %+v, want True since %v", c, at(40))
	}
}

func pollStatus(t *testing.T, h http.Handler) PodStatus {
	t.Helper()
	r := do(t, h, http.MethodGet, "/status")
	var st Status
	if err := json.Unmarshal(r.Body.Bytes(), &st); err != nil || st.Pod == nil {
		t.Fatalf("/status: %v\n%s", err, r.Body)
	}
	return *st.Pod
}

// The first observation is stamped at the pod's start, when that is known.
func TestPodTrackerStampsSince(t *testing.T) {
	src := newChangingSource(podSnap(false))
	clock := make(tickClock)
	since := t0.Add(-time.Minute)
	tr := NewPodTracker(PodRoles{Containers: []string{"app"}, RestartPolicy: "Always", Since: since}, src, clock.now)
	ctx, cancel := context.WithCancel(context.Background())
	go tr.Run(ctx)
	clock <- t0
	cancel()
	<-tr.done
	for _, c := range tr.last.pod.Conditions {
		if !c.LastTransitionTime.Equal(since) {
			t.Errorf("%s since %v, want the pod's start %v", c.Type, c.LastTransitionTime, since)
		}
	}
}
