package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// Operator commands and reloads in the randomized invariant test
// (invariant_test.go): act calls operate, and checkStep, checkLaunch and
// checkSignal hold them to the rules of docs/operate.md.

// load is the chaos world's config reader for reload.
func (c *chaos) load() (*config.Config, error) {
	return config.Parse("chaos.yaml", []byte(*c.next.Load()), func(string) (string, bool) { return "", false })
}

// operate sends, one time in six, a random command without waiting for its
// outcome (the chaos goes on meanwhile, as it would with a real client), and
// reports whether it did. It draws from c.ops only, so that the other
// events of a seed stay what they were before commands existed.
func (c *chaos) operate() bool {
	if c.ops.IntN(6) != 0 {
		return false
	}
	name := fmt.Sprintf("p%d", c.ops.IntN(c.n))
	var op string
	req := Request{Names: []string{name}}
	switch r := c.ops.IntN(10); {
	case r < 3:
		op = "stop"
	case r < 5:
		op = "start"
	case r < 7:
		op = "restart"
	case r < 8:
		op, req.Signal = "signal", "USR2"
		if c.nt.IntN(2) == 0 {
			op, req.Signal = "reload", "" // podvisor reload NAME (invariant_notify_test.go)
		}
	default:
		op, req = "reload", Request{}
		next := *c.next.Load()
		if c.ops.IntN(2) == 0 { // change one command; else reload as is
			old := fmt.Sprintf("command: [%s", name)
			next = strings.Replace(next, old, old+", x", 1)
		} else if c.ops.IntN(2) == 0 { // or rename the last process (nothing depends on it)
			last := c.n - 1
			p, r := fmt.Sprintf("  p%d:\n", last), fmt.Sprintf("  r%d:\n", last)
			if strings.Contains(next, p) {
				next = strings.Replace(next, p, r, 1)
			} else {
				next = strings.Replace(next, r, p, 1)
			}
			if c.ops.IntN(2) == 0 { // and change one command: a restart that waits for the rename's stop
				old := fmt.Sprintf("command: [%s", name)
				next = strings.Replace(next, old, old+", y", 1)
			}
		}
		c.next.Store(&next)
	}
	c.logf("act: podvisor %s %v", op, req)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	go func() {
		defer cancel()
		res := c.sup.Command(ctx, op, req)
		c.logf("answer to %s %v: ok=%v %s %v", op, req.Names, res.OK, res.Error, res.Results)
	}()
	return true
}

// checkHeld: outside teardown, an operator-stopped process is down or on
// its way down, never pending, starting or running on its own.
func (c *chaos) checkHeld(r *record) {
	if !r.op.held || c.sup.phase == PhaseStopping {
		return
	}
	switch {
	case r.state == Stopped, r.state == Stopping:
	case r.cur.child != nil && r.wantStop == intentHold:
	default:
		c.violate("%s stopped by podvisor stop but %s (wantStop %d)", r.p.Name, r.state, r.wantStop)
	}
}

// rec is the record a chaos child named name belongs to: the current one,
// or one a reload removed that is still stopping.
func (c *chaos) rec(name string) *record {
	if r, ok := c.sup.byName[name]; ok {
		return r
	}
	for _, r := range c.sup.recs {
		if r.op.gone && r.p.Name == name && (r.cur.child != nil || r.cur.lingering != nil || r.old != nil) {
			return r
		}
	}
	return nil
}

// checkRename: a renamed process (pN <-> rN) never starts while a removed
// incarnation under either name is still alive (issue 22 item 3).
func (c *chaos) checkRename(name string) {
	if len(name) < 2 || name[0] != 'p' && name[0] != 'r' {
		return
	}
	for _, r := range c.sup.recs {
		if r.op.gone && r.p.Name[1:] == name[1:] && (r.cur.child != nil || r.cur.lingering != nil || r.old != nil) {
			c.violate("%s started while %s, removed by a reload, is still %s", name, r.p.Name, r.state)
		}
	}
}

// checkWaiters runs after each step, when every waiter that can be
// answered has been: a stop still waited for is one of a live incarnation,
// the one it stops (not one a later start launched meanwhile, issue 22
// item 9); restarts that followed a dependency are restarts.
func (c *chaos) checkWaiters() {
	for _, w := range c.sup.ops.waiters {
		for _, it := range w.items {
			if it.done || it.goal != goalStopped {
				continue
			}
			if r := it.r; r.cur.child == nil && r.cur.lingering == nil || r.cur.gen != it.gen {
				c.violate("a stop of %s (gen %d) still waits, but %s is %s at gen %d", r.p.Name, it.gen, r.p.Name, r.state, r.cur.gen)
			}
		}
	}
	for _, r := range c.sup.recs {
		if r.count.followed > r.count.restarts {
			c.violate("%s: %d restarts followed a dependency, of %d restarts", r.p.Name, r.count.followed, r.count.restarts)
		}
	}
}
