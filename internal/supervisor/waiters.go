// Answering operator commands: each waiter is settled once every process it
// concerns has reached its outcome, or can no longer reach it.

package supervisor

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/podvisor/podvisor/internal/config"
)

// done records an immediate outcome for r.
func (w *waiter) done(r *record, ok bool, msg string) {
	w.items = append(w.items, &waitItem{r: r, done: true, res: Result{Name: r.p.Name, OK: ok, Message: msg}})
}

// settleWaiters answers every waiter whose items all reached an outcome.
func (s *Supervisor) settleWaiters() {
	if len(s.ops.waiters) == 0 {
		return
	}
	kept := s.ops.waiters[:0]
	published := false
	for _, w := range s.ops.waiters {
		all := true
		for _, it := range w.items {
			if !it.done {
				s.evaluate(it)
			}
			all = all && it.done
		}
		if !all {
			kept = append(kept, w)
			continue
		}
		w.resp.OK = w.resp.Error == ""
		// In the order the outcomes happened (stop: dependents first),
		// not the order the command listed the processes in.
		slices.SortStableFunc(w.items, func(a, b *waitItem) int { return cmp.Compare(a.seq, b.seq) })
		for _, it := range w.items {
			w.resp.Results = append(w.resp.Results, it.res)
			w.resp.OK = w.resp.OK && it.res.OK
		}
		if !published {
			// What the answer says must be what /status shows from now on.
			s.publish()
			published = true
		}
		w.reply <- w.resp // buffered: never blocks, even if nobody listens any more
	}
	for i := len(kept); i < len(s.ops.waiters); i++ {
		s.ops.waiters[i] = nil
	}
	s.ops.waiters = kept
}

// evaluate decides whether one item has reached its outcome.
func (s *Supervisor) evaluate(it *waitItem) {
	r := it.r
	finish := func(ok bool, msg string) {
		s.ops.outcomes++
		it.done, it.seq = true, s.ops.outcomes
		it.res = Result{Name: r.p.Name, OK: ok, Message: msg}
	}
	if it.goal == goalStopped {
		msg := it.verb
		if it.pid != 0 {
			msg += fmt.Sprintf(" (was pid %d)", it.pid)
		}
		if r.cur.child == nil && r.cur.lingering == nil {
			finish(true, msg)
		} else if r.cur.gen != it.gen {
			// The incarnation it stopped is gone, and a later start or
			// restart launched a new one in the same step: answer now,
			// not at the client's timeout.
			finish(false, msg+", then started again by a later command"+pidText(r.cur.pid))
		} else if s.phase == PhaseStopping {
			finish(true, it.verb+": podvisor is shutting down")
		}
		return
	}
	switch {
	case r.op.held:
		finish(false, "stopped by podvisor stop meanwhile")
	case r.op.gone:
		finish(false, "removed from the config meanwhile")
	case r.state == Failed:
		finish(false, "failed: "+r.reason)
	case s.phase == PhaseStopping:
		finish(false, "podvisor is shutting down")
	case r.cur.gen <= it.gen:
		// not started again yet
	case r.state == Completed:
		finish(true, it.verb+", completed")
	case r.state == Running && r.cur.child != nil && r.p.Type != config.Oneshot:
		// A service once ready; a job once running (it may run for long);
		// a oneshot is waited for until it completed.
		msg := it.verb
		if it.pid != 0 {
			msg += fmt.Sprintf(" (pid %d -> %d)", it.pid, r.cur.pid)
		} else {
			msg += fmt.Sprintf(" (pid %d)", r.cur.pid)
		}
		if r.p.Ready != nil {
			msg += ", ready"
		}
		finish(true, msg)
	case r.state == Backoff || r.state == Stopped:
		finish(false, it.verb+" but exited: "+r.reason)
	}
}
