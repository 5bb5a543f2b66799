package supervisor

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/logs"
)

// Operator commands (podvisor restart|stop|start|signal|reload) reach the
// loop as commandEv events carrying a reply channel: the loop stays the only
// owner of process state. A command acts at once and registers a waiter; the
// loop answers the waiter once every process it concerns has reached its
// outcome (settleWaiters runs after each step). A client that goes away only
// stops waiting: the command itself is never left half-done.

// reasonHeld is the reason /status shows for an operator-stopped process.
const reasonHeld = "stopped by podvisor stop"

// Request is an operator command's arguments. internal/control carries it
// on the control socket and converts it (control.Supervised): the wire
// format is the control package's, not the supervisor's.
type Request struct {
	Names  []string // restart, stop, start, signal (exactly one)
	Signal string   // signal: a name or a number, as proc.ParseSignal reads it
	DryRun bool     // reload: plan only
}

// Result is a command's outcome for one process.
type Result struct {
	Name    string
	OK      bool
	Message string // what happened, or why not: "restarted (pid 12 -> 15)"
}

// Response is a command's answer.
type Response struct {
	OK bool
	// Error refuses the whole request: unknown process, teardown in
	// progress, invalid config (then Errors has every problem).
	Error   string
	Errors  []string
	Results []Result
	// Reload: the plan, one action per line, and the config generation
	// now in effect (unchanged by a dry run or a refusal).
	Plan       []string
	Generation uint64
}

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

type waitItem struct {
	r    *record
	goal goal
	gen  uint64 // goalUp: the incarnation must be newer than this; goalStopped: the one to stop
	pid  int    // the pid when the command began (for the message)
	verb string // "stopped", "restarted", "started", ...
	done bool
	res  Result
	// seq orders the outcomes as they happened (0: known when the command
	// began), so the answer lists them in that order.
	seq uint64
}

type waiter struct {
	reply chan Response
	resp  Response
	items []*waitItem
}

// Command hands the command to the loop and
// waits for the outcome until ctx is done.
func (s *Supervisor) Command(ctx context.Context, op string, req Request) Response {
	ev := commandEv{op: op, req: req, reply: make(chan Response, 1)}
	if op == "reload" && len(req.Names) > 0 {
		op = "reload-process" // podvisor reload NAME: the process's own reload (reloadproc.go)
		ev.op = op
	}
	if op == "reload" {
		if s.ops.load == nil {
			return Response{Error: "reload is not available in this podvisor"}
		}
		// Reading and validating the file (env files, user database) is
		// I/O: it happens here, never in the loop. One read at a time, held
		// until the result is in the inbox: racing reloads are applied in
		// the order their files were read.
		select {
		case s.reading <- struct{}{}:
		case <-s.done:
			return Response{Error: "podvisor is exiting"}
		case <-ctx.Done():
			return Response{Error: "timed out waiting for another reload to be read"}
		}
		ev.cfg, ev.err = s.ops.load()
	}
	msg := s.enqueue(ctx, ev)
	if op == "reload" {
		<-s.reading
	}
	if msg != "" {
		return Response{Error: msg}
	}
	select {
	case res := <-ev.reply:
		return res
	case <-s.done:
		return Response{Error: "podvisor exited before the command completed"}
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
func (s *Supervisor) notYet(req Request) Response {
	resp := Response{Error: "timed out waiting for the outcome (the command goes on; see podvisor status)"}
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
				resp.Results = append(resp.Results, Result{Name: n, Message: msg})
			}
		}
	}
	return resp
}

// Tail returns the output tail of the process name.
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
		case "reload-process":
			s.opReload(w, rs, now)
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

func pidText(pid int) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// observeReload reports a reload attempt (for the metrics).
func (s *Supervisor) observeReload(result string) { s.tl.Reload(result) }
