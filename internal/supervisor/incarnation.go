// An incarnation is one spawn of a process: its child, its readiness and
// every deadline that runs for it. A spawn makes a new one (start.go); the
// record keeps only what outlives it (types.go).

package supervisor

import (
	"context"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// incarnation is the loop-owned state of one spawn of a process.
type incarnation struct {
	gen       uint64 // the record's spawn count: events name it
	child     Child  // nil before the spawn succeeded and once it exited
	pid       int
	startedAt time.Time
	readyAt   time.Time
	ready     bool
	startedUp bool // a oneshot's or job's startup check passed (jobprobes.go)
	readyOnce bool // a oneshot's or job's ready check passed (completion.go)

	due         time.Time // start timeout, or stop escalation
	remindAt    time.Time // the next "still waiting for readiness" line
	watchdogDue time.Time // the next WATCHDOG=1 is due by then (zero: no watchdog armed)

	status      string // STATUS= (notify)
	readyDetail string // the last readiness detail, for /status and the log
	errno       int    // last ERRNO= (0: none)
	seen        bool   // seen running after its exec (a sidecar's start gate; sidecars.go)

	reloading   bool      // reloading: shown as such until done (reloadproc.go)
	reloadBegin time.Time // when the reload podvisor asked for began
	reloadCmd   bool      // reload.command in flight

	intent      stopIntent    // why it is being stopped
	failedBy    *config.Probe // the check whose failure asked for the stop (its stop_timeout)
	stopCmd     bool          // stop.command in flight
	hookEarly   bool          // stop.command_first: the command began with the teardown
	hookEnded   bool          // a completed process's stop.command began in the teardown (completion.go)
	signalledAt time.Time     // when the stop signal went out; zero: not yet
	killed      bool          // SIGKILL sent
	killedAt    time.Time
	cancelProbe context.CancelFunc
	cancelReady context.CancelFunc // a ready check with while_stopping (stopProbes)
	cancelHook  context.CancelFunc // cancels the stop.command in flight

	// lingering holds the exit of a stopped leader whose process group still
	// has members: the stop is over only once the group is empty (docs/reliability.md, B4),
	// checked at pollAt since the kernel sends no event for it.
	lingering *proc.Exit
	pollAt    time.Time
}

// spawn is a new incarnation gen of p, spawned at now: everything about the
// previous one stays behind with it.
func spawn(p *config.Process, gen uint64, now time.Time) *incarnation {
	inc := &incarnation{gen: gen}
	if p.Watchdog > 0 {
		inc.watchdogDue = now.Add(p.Watchdog) // armed at the spawn, as systemd does
	}
	return inc
}

// incarnationOf returns the record idx and its incarnation gen: the
// current one, or the old one of a restart with overlap. inc is nil when
// the event is about neither (an earlier spawn: stale), or about an
// incarnation whose exit the loop has heard and ev is not one of the
// reports that still apply then (appliesAfterExit).
func (s *Supervisor) incarnationOf(ev procEvent) (*record, *incarnation) {
	idx, gen := ev.about()
	if idx < 0 || idx >= len(s.recs) {
		return nil, nil
	}
	r := s.recs[idx]
	var inc *incarnation
	switch {
	case r.old != nil && r.old.gen == gen:
		inc = r.old
	case r.cur.gen == gen:
		inc = r.cur
	default:
		return r, nil
	}
	if inc.child == nil && !appliesAfterExit(ev) {
		return r, nil
	}
	return r, inc
}
