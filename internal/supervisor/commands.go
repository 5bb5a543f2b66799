package supervisor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/logs"
)

// Operator commands (podvisor restart|stop|start|signal|reload) reach the
// loop as commandEv events carrying a reply channel: the loop stays the only
// owner of process state. A command acts at once and registers a waiter; the
// loop answers the waiter once every process it concerns has reached its
// outcome (settleWaiters runs after each step). A client that goes away only
// stops waiting: the command itself is never left half-done.

// More stop intents (see supervisor.go).
const (
	intentHold    stopIntent = 16 + iota // podvisor stop: stays stopped until start
	intentRestart                        // podvisor restart or a reload: starts again at once
	intentRemove                         // removed by a reload
)

// reasonHeld is the reason /status shows for an operator-stopped process.
const reasonHeld = "stopped by podvisor stop"

// commandEv is an operator command for the loop.
type commandEv struct {
	op    string
	req   control.Request
	cfg   *config.Config // reload: the new config, loaded outside the loop
	err   error          // reload: loading or validating it failed
	reply chan control.Response
}

// hangupLoadedEv is the result of the config load a SIGHUP started.
type hangupLoadedEv struct {
	cfg *config.Config
	err error
}

func (commandEv) isEvent()      {}
func (hangupLoadedEv) isEvent() {}

// operator is the loop-owned state of operator commands and reloads.
type operator struct {
	waiters    []*waiter
	generation uint64
	load       func() (*config.Config, error)
	onReload   func(*config.Config)
	tails      *logs.Tails
	// SIGHUP storms are coalesced (reload.go): one load in flight, at most
	// one more queued behind it.
	hupLoading, hupAgain bool
	hupRead              *atomic.Bool // the load in flight has begun reading
	outcomes             uint64       // waitItem.seq of the latest outcome
}

// ReloadObserver is implemented by an Observer that counts reloads by
// result: "applied", "invalid" or "refused".
type ReloadObserver interface {
	ReloadObserved(result string)
}

// goal is what a waiter waits for on one process.
type goal uint8

const (
	goalStopped goal = iota // no child left
	goalUp                  // a newer incarnation is running (ready) or has completed
)

type waitItem struct {
	r    *record
	goal goal
	gen  uint64 // goalUp: the incarnation must be newer than this; goalStopped: the one to stop
	pid  int    // the pid when the command began (for the message)
	verb string // "stopped", "restarted", "started", ...
	done bool
	res  control.Result
	// seq orders the outcomes as they happened (0: known when the command
	// began), so the answer lists them in that order.
	seq uint64
}

type waiter struct {
	reply chan control.Response
	resp  control.Response
	items []*waitItem
}

// Command implements control.Backend: it hands the command to the loop and
// waits for the outcome until ctx is done.
func (s *Supervisor) Command(ctx context.Context, op string, req control.Request) control.Response {
	ev := commandEv{op: op, req: req, reply: make(chan control.Response, 1)}
	if op == "reload" {
		if s.ops.load == nil {
			return control.Response{Error: "reload is not available in this podvisor"}
		}
		// Reading and validating the file (env files, user database) is
		// I/O: it happens here, never in the loop. One read at a time, held
		// until the result is in the inbox: racing reloads are applied in
		// the order their files were read.
		select {
		case s.reading <- struct{}{}:
		case <-s.done:
			return control.Response{Error: "podvisor is exiting"}
		case <-ctx.Done():
			return control.Response{Error: "timed out waiting for another reload to be read"}
		}
		ev.cfg, ev.err = s.ops.load()
	}
	msg := s.enqueue(ctx, ev)
	if op == "reload" {
		<-s.reading
	}
	if msg != "" {
		return control.Response{Error: msg}
	}
	select {
	case res := <-ev.reply:
		return res
	case <-s.done:
		return control.Response{Error: "podvisor exited before the command completed"}
	case <-ctx.Done():
		return s.notYet(req)
	}
}

// enqueue hands ev to the loop; it returns why it could not, or "".
func (s *Supervisor) enqueue(ctx context.Context, ev event) string {
	select {
	case s.inbox <- ev:
		return ""
	case <-s.done:
		return "podvisor is exiting"
	case <-ctx.Done():
		return "timed out before podvisor took the command"
	}
}

// notYet answers a command whose outcome did not come in time, from the
// latest snapshot. The command goes on.
func (s *Supervisor) notYet(req control.Request) control.Response {
	resp := control.Response{Error: "timed out waiting for the outcome (the command goes on; see podvisor status)"}
	snap := s.Snapshot()
	for _, n := range req.Names {
		for _, p := range snap.Processes {
			if p.Name == n {
				msg := "not done yet: " + p.State
				if len(p.WaitingFor) > 0 {
					msg += ", waiting for " + strings.Join(p.WaitingFor, ", ")
				} else if p.Reason != "" {
					msg += " (" + p.Reason + ")"
				}
				resp.Results = append(resp.Results, control.Result{Name: n, Message: msg})
			}
		}
	}
	return resp
}

// Tail implements control.Backend.
func (s *Supervisor) Tail(name string) (*logs.Tail, error) {
	snap := s.Snapshot()
	names := make([]string, 0, len(snap.Processes))
	for _, p := range snap.Processes {
		if p.Name == name {
			if s.ops.tails == nil {
				return nil, fmt.Errorf("no output is kept (log.tail is 0)")
			}
			return s.ops.tails.Get(name), nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("%s", unknownProcess(name, names))
}

func unknownProcess(name string, names []string) string {
	msg := fmt.Sprintf("unknown process %q", name)
	if s := config.Suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// onCommand runs in the loop.
func (s *Supervisor) onCommand(e commandEv, now time.Time) {
	w := &waiter{reply: e.reply}
	switch {
	case s.phase == PhaseStopping:
		w.resp.Error = "podvisor is shutting down: " + e.op + " refused during teardown"
		if e.op == "reload" {
			s.observeReload("refused")
			s.logRefusedReload("podvisor reload", w.resp)
		}
	case e.op == "reload":
		s.reload(w, e.cfg, e.err, e.req.DryRun, now)
		s.logRefusedReload("podvisor reload", w.resp)
	default:
		rs, msg := s.resolve(e.req.Names)
		if msg != "" {
			w.resp.Error = msg
			break
		}
		switch e.op {
		case "signal":
			s.opSignal(w, rs[0], e.req.Signal)
		case "stop":
			s.opStop(w, rs, now)
		case "start":
			s.opStart(w, rs, now)
		case "restart":
			s.opRestart(w, rs, now)
		default:
			w.resp.Error = "unknown command " + e.op
		}
	}
	s.ops.waiters = append(s.ops.waiters, w)
	s.settleWaiters()
}

// resolve maps names to live records, refusing unknown ones all at once.
func (s *Supervisor) resolve(names []string) ([]*record, string) {
	var rs []*record
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if r, ok := s.byName[n]; ok {
			rs = append(rs, r)
		} else {
			unknown = append(unknown, unknownProcess(n, s.cfg.Names))
		}
	}
	return rs, strings.Join(unknown, "; ")
}

func (s *Supervisor) opSignal(w *waiter, r *record, name string) {
	sig, err := control.ParseSignal(name)
	switch {
	case err != nil:
		w.resp.Error = err.Error()
	case r.child == nil:
		// An item, not a bare result: settleWaiters derives OK from the
		// items, so "not running" makes the command fail (exit 1).
		w.done(r, false, "not running ("+r.state.String()+"): no signal sent")
	default:
		sigName := control.SignalName(sig)
		if err := r.child.Signal(sig); err != nil {
			w.done(r, false, "signal failed: "+err.Error())
			return
		}
		s.log.Info("signal sent by podvisor signal", "process", r.p.Name, "signal", sigName, "pid", r.pid)
		w.done(r, true, fmt.Sprintf("sent %s to process group %d", sigName, r.pid))
	}
}

// dependentsClosure returns r's dependents, transitively, in s.recs order.
func (s *Supervisor) dependentsClosure(r *record) []*record {
	in := map[*record]bool{}
	var walk func(*record)
	walk = func(x *record) {
		for _, d := range x.dependents {
			dr := s.recs[d]
			if !in[dr] && !dr.gone {
				in[dr] = true
				walk(dr)
			}
		}
	}
	walk(r)
	out := make([]*record, 0, len(in))
	for _, x := range s.recs {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// opStop stops each named process and, first, everything that depends on
// it; they stay stopped (no policy restart, no dependency start) until
// podvisor start.
func (s *Supervisor) opStop(w *waiter, rs []*record, now time.Time) {
	for _, r := range rs {
		switch {
		case r.held:
			w.done(r, true, "already stopped ("+reasonHeld+")")
			continue
		case r.state == Completed:
			w.done(r, false, "has completed: nothing to stop (its dependents keep running)")
			continue
		case r.state == Failed:
			w.done(r, false, "has failed: nothing to stop")
			continue
		}
		s.hold(w, r, r.p.Name, "stopped")
		for _, d := range s.dependentsClosure(r) {
			if !d.held && d.state != Completed && d.state != Failed {
				s.hold(w, d, r.p.Name, "stopped with "+r.p.Name)
			}
		}
	}
	s.stepWantedStops(now)
}

// hold marks r operator-stopped and starts (or arranges) its stop.
func (s *Supervisor) hold(w *waiter, r *record, by, verb string) {
	r.held, r.heldBy = true, by
	r.relaunch = false
	s.log.Info("stopping: podvisor stop", "process", r.p.Name, "by", by)
	switch {
	case r.state == Stopping:
		// Being stopped already (a restart, a failed check): that stop
		// finishes as it began, and operatorExit keeps it down.
	case r.child != nil:
		r.wantStop = intentHold // stepWantedStops waits for its dependents
	default:
		r.state, r.reason = Stopped, reasonHeld
	}
	w.items = append(w.items, &waitItem{r: r, goal: goalStopped, gen: r.gen, pid: r.pid, verb: verb})
}

// opStart starts each named operator-stopped (or policy-stopped) process and
// what its stop took down with it. A start whose dependency is stopped by
// the operator is refused, naming it: starting it would otherwise wait
// forever (or silently start more than was asked).
func (s *Supervisor) opStart(w *waiter, rs []*record, now time.Time) {
	set := map[*record]string{} // records to start -> their verb
	var order []*record
	for _, r := range rs {
		switch {
		case r.state == Completed:
			w.done(r, false, "has completed; oneshots and jobs run once (podvisor restart runs it again)")
			continue
		case !r.held && r.state != Stopped && r.state != Failed:
			w.done(r, true, "already "+r.state.String()+pidText(r.pid))
			continue
		}
		set[r] = "started"
		order = append(order, r)
		for _, x := range s.recs {
			if x.held && x.heldBy == r.p.Name && x != r {
				if _, ok := set[x]; !ok {
					set[x] = "started with " + r.p.Name
					order = append(order, x)
				}
			}
		}
	}
	for _, r := range order {
		if why := s.blockedBy(r, set); why != "" {
			w.done(r, false, "not started: "+why)
			delete(set, r)
		}
	}
	for _, r := range order {
		verb, ok := set[r]
		if !ok {
			continue
		}
		r.held, r.heldBy = false, ""
		s.log.Info("starting: podvisor start", "process", r.p.Name)
		switch {
		case r.child != nil && r.state == Stopping:
			// Its stop is under way (a stop.command, a slow exit): it
			// comes back once the old incarnation is gone.
			r.intent = intentRestart
		case r.child != nil:
			// Still waiting for its dependents to stop: it just stays.
			r.wantStop = intentNone
			w.done(r, true, "kept running (its stop had not begun)"+pidText(r.pid))
			continue
		default:
			r.state, r.reason = Pending, ""
		}
		w.items = append(w.items, &waitItem{r: r, goal: goalUp, gen: r.gen, verb: verb})
	}
	_ = now
}

// blockedBy says which dependency of r stays down whatever happens (stopped
// by the operator, or stopped or failed for good) and is not being started
// along, or "".
func (s *Supervisor) blockedBy(r *record, starting map[*record]string) string {
	for _, d := range r.deps {
		dr := s.recs[d.idx]
		if _, ok := starting[dr]; ok {
			continue
		}
		switch {
		case dr.held:
			return fmt.Sprintf("dependency %s is stopped (%s); start it first: podvisor start %s", dr.p.Name, reasonHeld, dr.p.Name)
		case dr.state == Failed || dr.state == Stopped && dr.child == nil:
			return fmt.Sprintf("dependency %s is %s (%s) and will not start by itself; start it first: podvisor start %s", dr.p.Name, dr.state, dr.reason, dr.p.Name)
		}
	}
	return ""
}

// opRestart stops each named process (its restart: true dependents first)
// and starts it again once its dependencies hold, then those dependents.
func (s *Supervisor) opRestart(w *waiter, rs []*record, now time.Time) {
	for _, r := range rs {
		if r.held || r.state == Stopped || r.state == Failed {
			// Nothing runs: restart means start (as systemctl does).
			s.opStart(w, []*record{r}, now)
			continue
		}
		item := &waitItem{r: r, goal: goalUp, gen: r.gen, pid: r.pid, verb: "restarted"}
		w.items = append(w.items, item)
		for _, d := range s.restartClosure(r) {
			if d.child != nil {
				w.items = append(w.items, &waitItem{r: d, goal: goalUp, gen: d.gen, pid: d.pid, verb: "restarted with " + r.p.Name})
			}
		}
		s.log.Info("restarting: podvisor restart", "process", r.p.Name)
		switch r.state {
		case Backoff:
			r.due = now // skip what is left of the backoff
		case Completed:
			r.state, r.relaunch = Pending, true // a oneshot runs again
			s.requestStop(r, intentCascade, now)
		case Starting, Running:
			s.requestStop(r, intentRestart, now)
		}
		// Pending: it starts when its dependencies hold; Stopping: it is
		// on its way down and starts again by its intent or policy.
	}
}

// restartClosure returns the processes that declared restart: true on r,
// transitively.
func (s *Supervisor) restartClosure(r *record) []*record {
	var out []*record
	seen := map[*record]bool{}
	var walk func(*record)
	walk = func(x *record) {
		for _, d := range x.restartDeps {
			dr := s.recs[d]
			if !seen[dr] && !dr.gone {
				seen[dr] = true
				out = append(out, dr)
				walk(dr)
			}
		}
	}
	walk(r)
	return out
}

// operatorExit finishes the exit of a process stopped by a command. It
// reports whether it did.
func (s *Supervisor) operatorExit(r *record, intent stopIntent, code int) bool {
	switch {
	case r.gone:
		intent, r.wantStop = intentRemove, intentNone // whatever ended it, it does not come back
	case r.held && intent == intentNone && r.p.Type != config.Service && r.p.IsSuccess(code):
		// A oneshot or job that finished before its stop began (it was
		// waiting for its dependents to stop): it completed.
		r.held, r.heldBy, r.wantStop = false, "", intentNone
		return false
	case r.held:
		intent, r.wantStop = intentHold, intentNone // exited by itself while its stop waited: it stays down
	}
	switch intent {
	case intentHold:
		r.state, r.reason = Stopped, reasonHeld
		s.log.Info("stopped by podvisor stop", "process", r.p.Name, "code", code)
	case intentRemove:
		r.state, r.reason = Stopped, "removed from the config"
		s.log.Info("stopped: removed from the config", "process", r.p.Name, "code", code)
	case intentRestart:
		r.state, r.reason, r.relaunch = Pending, "restarting: podvisor restart", true
		s.log.Info("stopped for restart", "process", r.p.Name, "code", code)
	default:
		return false
	}
	return true
}

// done records an immediate outcome for r.
func (w *waiter) done(r *record, ok bool, msg string) {
	w.items = append(w.items, &waitItem{r: r, done: true, res: control.Result{Name: r.p.Name, OK: ok, Message: msg}})
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
		it.res = control.Result{Name: r.p.Name, OK: ok, Message: msg}
	}
	if it.goal == goalStopped {
		msg := it.verb
		if it.pid != 0 {
			msg += fmt.Sprintf(" (was pid %d)", it.pid)
		}
		if r.child == nil && r.lingering == nil {
			finish(true, msg)
		} else if r.gen != it.gen {
			// The incarnation it stopped is gone, and a later start or
			// restart launched a new one in the same step: answer now,
			// not at the client's timeout.
			finish(false, msg+", then started again by a later command"+pidText(r.pid))
		} else if s.phase == PhaseStopping {
			finish(true, it.verb+": podvisor is shutting down")
		}
		return
	}
	switch {
	case r.held:
		finish(false, "stopped by podvisor stop meanwhile")
	case r.gone:
		finish(false, "removed from the config meanwhile")
	case r.state == Failed:
		finish(false, "failed: "+r.reason)
	case s.phase == PhaseStopping:
		finish(false, "podvisor is shutting down")
	case r.gen <= it.gen:
		// not started again yet
	case r.state == Completed:
		finish(true, it.verb+", completed")
	case r.state == Running && r.child != nil && r.p.Type != config.Oneshot:
		// A service once ready; a job once running (it may run for long);
		// a oneshot is waited for until it completed.
		msg := it.verb
		if it.pid != 0 {
			msg += fmt.Sprintf(" (pid %d -> %d)", it.pid, r.pid)
		} else {
			msg += fmt.Sprintf(" (pid %d)", r.pid)
		}
		if r.p.Ready != nil {
			msg += ", ready"
		}
		finish(true, msg)
	case r.state == Backoff || r.state == Stopped:
		finish(false, it.verb+" but exited: "+r.reason)
	}
}

func pidText(pid int) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// observeReload counts a reload attempt in the metrics, if they count it.
func (s *Supervisor) observeReload(result string) {
	if o, ok := s.obs.(ReloadObserver); ok {
		o.ReloadObserved(result)
	}
}
