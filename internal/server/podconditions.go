package server

import (
	"context"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// The pod conditions' transition times, kept as the kubelet's status
// manager keeps them (status_manager.go, updateLastTransitionTime): a
// condition's lastTransitionTime is when its status last changed, and is
// kept for as long as the status stays the same. They cannot be derived
// from the processes' start and ready times at request time: a container
// whose readiness probe fails makes Ready False at that moment, and a later
// True must not reach back to the first ready time. So a tracker watches
// every published snapshot, whether anybody polls or not.

// conditionTimes is the stateful part: each condition's status and when it
// last changed. It is a plain value owned by one goroutine (PodTracker.Run).
type conditionTimes struct {
	seen   bool
	status [numConds]bool
	since  [numConds]time.Time
}

// observe records the conditions' statuses seen at now and returns them
// with their transition times. The first observation stamps every
// condition with now; later ones move a condition's time only when its
// status differs from the last one observed.
func (c *conditionTimes) observe(status [numConds]bool, now time.Time) []PodCondition {
	for i, s := range status {
		if !c.seen || s != c.status[i] {
			c.status[i], c.since[i] = s, now
		}
	}
	c.seen = true
	return c.conditions()
}

// conditions returns what was last observed.
func (c *conditionTimes) conditions() []PodCondition {
	out := make([]PodCondition, numConds)
	for i := range out {
		out[i] = PodCondition{Type: condTypes[i], Status: trueFalse(c.status[i]), LastTransitionTime: c.since[i]}
	}
	return out
}

// PodTracker is the one owner of a pod's condition times: its Run
// goroutine observes every snapshot the supervisor publishes, and answers
// /status (both the HTTP port's and the control socket's) with the latest
// snapshot and the pod status observed from that same snapshot, so the
// processes and the conditions of one document always agree.
//
// A flip between two publishes (they are at most 1 ms apart, 100 ms in a
// teardown or a big start) is not seen, as the kubelet does not see one
// between two of its syncs; any flip between two polls of /status is.
type PodTracker struct {
	roles PodRoles
	src   EventSource
	now   func() time.Time
	reqs  chan chan podReply
	done  chan struct{} // closed when Run returns; last is then final
	last  podReply      // Run's; read by others only after done is closed
}

type podReply struct {
	snap supervisor.Snapshot
	pod  *PodStatus
}

// NewPodTracker returns the tracker of the pod whose containers roles
// names, over src's snapshots, with now as its clock (time.Now but in
// tests). Nothing is observed until Run is called.
func NewPodTracker(roles PodRoles, src EventSource, now func() time.Time) *PodTracker {
	return &PodTracker{roles: roles, src: src, now: now, reqs: make(chan chan podReply), done: make(chan struct{})}
}

// Run observes every published snapshot and answers requests until ctx is
// done. The first observation is stamped at the pod's start (roles.Since)
// when that is set: the statuses it sees are what the pod has had since.
func (t *PodTracker) Run(ctx context.Context) {
	defer close(t.done)
	var times conditionTimes
	first := true
	observe := func() {
		snap := t.src.Snapshot()
		pl := planPod(t.roles, NewStatus(snap))
		now := t.now()
		if first && !t.roles.Since.IsZero() && t.roles.Since.Before(now) {
			now = t.roles.Since
		}
		first = false
		t.last = podReply{snap: snap, pod: &PodStatus{Phase: pl.phase, Ready: pl.ready, Total: pl.total, Conditions: times.observe(pl.conds, now)}}
	}
	changed := t.src.Changed() // first, so no publish falls in between
	observe()
	for {
		select {
		case <-changed:
			changed = t.src.Changed()
			observe()
		case reply := <-t.reqs:
			select {
			case <-changed: // published since: the caller gets the latest
				changed = t.src.Changed()
				observe()
			default: // nothing published since: t.last is the latest
			}
			reply <- t.last
		case <-ctx.Done():
			return
		}
	}
}

// current returns the latest snapshot and the pod status observed from it.
// Once Run has returned it returns Run's last observation; before Run
// runs, it waits for it (or for ctx).
func (t *PodTracker) current(ctx context.Context) (podReply, error) {
	reply := make(chan podReply, 1) // Run never blocks on a caller gone
	select {
	case t.reqs <- reply:
		return <-reply, nil
	case <-t.done:
		return t.last, nil
	case <-ctx.Done():
		return podReply{}, ctx.Err()
	}
}
