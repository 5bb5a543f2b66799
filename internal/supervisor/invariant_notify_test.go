package supervisor

import "fmt"

// The rest of sd_notify in the randomized invariant test (issue 35, item
// 7): a notify process may send STOPPING=1, RELOADING=1 or MAINPID= after
// a READY=1, and `podvisor reload NAME` is among the operator's commands
// (invariant_ops_test.go). Both draw from c.nt, so the other events of a
// seed stay what they were. The invariants:
//   - the pid the loop holds for a live incarnation is its child's main
//     pid (MAINPID= changes both together);
//   - a process stopping on its own (STOPPING=1) gets no stop signal
//     from podvisor outside teardown;
//   - "reloading" is shown only for a running process with a child, and
//     a reload's signal goes only to a process with reload: that runs.

// notifyKid is a live child with ready: {notify: systemd}, drawn from
// c.nt, or nil.
func (c *chaos) notifyKid() *chaosChild {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ks []*chaosChild
	for i := range c.n {
		if k := c.kids[fmt.Sprintf("p%d", i)]; k != nil && !k.exiting && c.procs[k.name].watchdog > 0 {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return nil
	}
	return ks[c.nt.IntN(len(ks))]
}

// notifyMore makes k send one of the newer notify messages, three times
// in four.
func (c *chaos) notifyMore(k *chaosChild) {
	switch c.nt.IntN(4) {
	case 0:
		c.logf("act: %s sends STOPPING=1", k.name)
		k.ctl <- -4
	case 1:
		c.logf("act: %s sends RELOADING=1", k.name)
		k.ctl <- -5
	case 2:
		c.logf("act: %s names a new main pid (MAINPID=)", k.name)
		k.ctl <- -6
	}
}

// newMainPid gives k a new pid, as a forking parent's daemon would have.
func (k *chaosChild) newMainPid() int {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	k.c.pid++
	k.pid = k.c.pid
	k.c.trace = append(k.c.trace, fmt.Sprintf("%s main pid now %d", k.name, k.pid))
	return k.pid
}

// checkMainPids runs once the chaos has settled: a MAINPID= in flight (the
// child names its daemon, the loop hears of it a step later) is heard by
// then, so the pid podvisor shows is its child's main pid.
func (c *chaos) checkMainPids(snap Snapshot) {
	var bad []string
	c.mu.Lock()
	for _, p := range snap.Processes {
		if k := c.kids[p.Name]; k != nil && !k.exiting && p.Pid != 0 && p.Pid != k.pid {
			bad = append(bad, fmt.Sprintf("%s: podvisor shows pid %d, its child's main pid is %d", p.Name, p.Pid, k.pid))
		}
	}
	c.mu.Unlock()
	for _, b := range bad {
		c.violate("%s", b)
	}
}

// checkNotify runs at every step for every record.
func (c *chaos) checkNotify(r *record) {
	if r.cur.reloading && r.state == Running && r.cur.child == nil {
		c.violate("%s reloading without a child", r.p.Name)
	}
	if r.cur.intent == intentSelf && r.cur.child != nil && r.state != Stopping {
		c.violate("%s said STOPPING=1 but is %s", r.p.Name, r.state)
	}
}

// checkSelfStopSignal: outside teardown, a process stopping on its own is
// not sent its stop signal (SIGKILL at its stop timeout only).
func (c *chaos) checkSelfStopSignal(r *record) {
	if r.cur.intent == intentSelf && c.sup.phase != PhaseStopping {
		c.violate("%s sent its stop signal while stopping on its own (STOPPING=1)", r.p.Name)
	}
}

// checkReloadSignal: a reload's HUP goes to a process with reload: {signal:
// HUP} that runs.
func (c *chaos) checkReloadSignal(r *record) {
	if r.p.Reload == nil || r.p.Reload.Signal == 0 {
		c.violate("%s sent HUP without a reload: signal", r.p.Name)
	}
	if r.state != Running && r.state != Starting {
		c.violate("%s sent its reload signal while %s", r.p.Name, r.state)
	}
}
