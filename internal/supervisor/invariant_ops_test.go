package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
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
	name := fmt.Sprintf("p%d", c.ops.IntN(len(c.procs)))
	var op string
	req := control.Request{Names: []string{name}}
	switch r := c.ops.IntN(10); {
	case r < 3:
		op = "stop"
	case r < 5:
		op = "start"
	case r < 7:
		op = "restart"
	case r < 8:
		op, req.Signal = "signal", "USR2"
	default:
		op, req = "reload", control.Request{}
		next := *c.next.Load()
		if c.ops.IntN(2) == 0 { // change one command; else reload as is
			old := fmt.Sprintf("command: [%s", name)
			next = strings.Replace(next, old, old+", x", 1)
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
	if !r.held || c.sup.phase == PhaseStopping {
		return
	}
	switch {
	case r.state == Stopped, r.state == Stopping:
	case r.child != nil && r.wantStop == intentHold:
	default:
		c.violate("%s stopped by podvisor stop but %s (wantStop %d)", r.p.Name, r.state, r.wantStop)
	}
}
