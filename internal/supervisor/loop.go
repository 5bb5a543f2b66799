// The event loop: one goroutine owns every record; events come in through
// the inbox, each is dispatched (handle), then step moves every record as far as
// it can go and nextWake says when the loop must look again.

package supervisor

import (
	"context"
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// send delivers ev to the loop unless the loop has returned.
func (s *Supervisor) send(ev event) {
	select {
	case s.inbox <- ev:
	case <-s.done:
	}
}

// Run supervises until teardown completes or ctx is cancelled. Signals are
// read from the channel (so tests can inject them): SIGTERM, SIGINT and SIGQUIT
// start the teardown, a second SIGTERM or SIGINT during teardown kills
// everything at once, SIGUSR1/SIGUSR2 are forwarded to every running process
// group, SIGHUP is logged and ignored. Cancelling ctx kills everything and
// returns once the children are reaped.
func (s *Supervisor) Run(ctx context.Context, signals <-chan os.Signal) Outcome {
	defer close(s.done)
	s.probeCtx, s.cancelAll = context.WithCancel(context.Background())
	defer s.cancelAll()
	s.relist = newRelist(s.pace, time.Now())
	s.startWatchers(s.probeCtx)

	// Signals are stamped on arrival, before the loop gets to them, so a
	// duplicate delivery is told from a second signal by when it came,
	// not by how busy the loop was.
	stamped := make(chan stampedSignal)
	go func() {
		for {
			select {
			case sig, ok := <-signals:
				if !ok {
					return
				}
				select {
				case stamped <- stampedSignal{sig, time.Now()}:
				case <-s.done:
					return
				}
			case <-s.done:
				return
			}
		}
	}()

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.step(now)
		s.settleWaiters()
		if s.afterStep != nil {
			s.afterStep(now)
		}
		if s.phase == PhaseStopping && (s.alive == 0 && s.stopCmds == 0 || s.abandoned) {
			s.publish()
			s.tl.TeardownEnded(time.Now())
			return s.outcome
		}
		if s.moreStops {
			// perf: the next wave of stop signals before any exit is
			// heard of: every child that is due gets its signal as soon as
			// the loop can send it, as in one step before waves, and its
			// exit waits in the inbox meanwhile (the reaper and the log
			// pump wait to deliver it; no lock is held). Pings and
			// signals are still answered between waves.
			s.answerPings()
			select {
			case <-ctx.Done():
				return s.cancel()
			case st := <-stamped:
				s.onSignal(st.sig, st.at)
			default:
			}
			continue
		}
		// perf: a snapshot is O(processes). Between waves of a big start,
		// and in a teardown, one at most every publishEvery; otherwise at
		// most every publishMin, so exits trickling in one after another
		// cost a few snapshots, not one each. (A teardown of 10,000 spent a
		// third of its CPU on snapshots and their garbage at publishMin;
		// /readyz turned 503 with the snapshot teardown made at once, and
		// the last one is made on the way out.) A deferred one is made
		// when the loop wakes for it.
		publishDue := time.Time{}
		if len(s.inbox) == 0 {
			gap := publishMin
			if s.moreStarts || s.phase == PhaseStopping {
				gap = publishEvery
			}
			if now.Sub(s.publishedAt) >= gap {
				s.publish()
				s.publishedAt = now
			} else {
				publishDue = s.publishedAt.Add(gap)
			}
		}
		wake := s.nextWake()
		if !publishDue.IsZero() && (wake.IsZero() || publishDue.Before(wake)) {
			wake = publishDue
		}
		if !wake.IsZero() {
			timer.Reset(max(wake.Sub(now), 0))
		} else {
			timer.Stop()
		}
		// Pings first: the select below picks among ready cases at random,
		// and with exits always queued (10,000 stopping) a ping waited for
		// several turns, over 100 ms, though each turn is a few ms.
		s.answerPings()
		select {
		case <-ctx.Done():
			return s.cancel()
		case ev := <-s.inbox:
			s.handle(ev, time.Now())
			// perf: what queued up behind it (200 exits of a fan-in arrive
			// together) is handled before the next step, so a burst costs
			// one step and one snapshot, not one per event. Bounded by what
			// is queued now, so pings and signals still get their turn.
			for n := len(s.inbox); n > 0; n-- {
				s.handle(<-s.inbox, time.Now())
			}
		case st := <-stamped:
			s.onSignal(st.sig, st.at)
		case reply := <-s.pings:
			close(reply)
		case <-timer.C:
		}
	}
}

// answerPings answers every ping already waiting, without blocking.
func (s *Supervisor) answerPings() {
	for {
		select {
		case reply := <-s.pings:
			close(reply)
		default:
			return
		}
	}
}

// cancel is the "caller is done waiting" path: SIGKILL every group and wait
// (bounded) until the children are reaped.
func (s *Supervisor) cancel() Outcome {
	s.cancelAll()
	if !s.haveResult {
		s.outcome = Outcome{Reason: ReasonCancelled, Detail: "cancelled"}
		s.haveResult = true
	}
	s.phase = PhaseStopping
	s.cancelled = true
	s.killAll("supervisor cancelled")
	for _, r := range s.recs {
		if r.cur.lingering != nil { // its group just got SIGKILL too
			ex := *r.cur.lingering
			r.cur.lingering = nil
			s.onExit(r, ex, time.Now())
		}
	}
	limit := time.After(5 * time.Second)
	for s.alive > 0 {
		select {
		case ev := <-s.inbox:
			s.handle(ev, time.Now())
		case <-limit:
			s.log.Error("children still alive after cancel", "count", s.alive)
			return s.outcome
		}
	}
	s.publish()
	return s.outcome
}

func (s *Supervisor) handle(ev event, now time.Time) {
	switch e := ev.(type) {
	case procEvent:
		s.handleProc(e, now)
	case watchEv:
		s.onWatch(e, now)
	case commandEv:
		s.onCommand(e, now)
	case hangupLoadedEv:
		s.onHangupLoaded(e, now)
	}
}

// handleProc dispatches an event about one incarnation, looked up once: an
// event about an earlier spawn changes nothing.
func (s *Supervisor) handleProc(ev procEvent, now time.Time) {
	if _, ok := ev.(stopCmdDoneEv); ok {
		s.stopCmds-- // counted whatever became of its incarnation
	}
	r, inc := s.incarnationOf(ev)
	if inc == nil {
		return
	}
	if inc == r.old {
		if e, ok := ev.(exitedEv); ok {
			s.oldExited(r, inc, e) // the outgoing one of an overlap: only its exit counts
		}
		return
	}
	switch e := ev.(type) {
	case probeFailedEv:
		if r.state == Starting || startupChecked(r) && !inc.startedUp {
			inc.readyDetail = e.detail
		}
	case startupEv:
		if inc.lingering != nil {
			return // its exit was heard
		}
		inc.readyDetail = e.detail
		if e.ok {
			s.onStartedUp(r, now)
		} else {
			s.startupFailed(r, e.detail, now)
		}
	case exitedEv:
		s.onExited(r, inc, e.exit, now)
	case readyEv:
		s.onReadyEv(r, inc, e, now)
	case completedReadyEv:
		s.onCompletedReady(r, e, now)
	case liveEv:
		if s.phase == PhaseStopping || r.state == Stopping {
			return
		}
		if !e.healthy && r.wantStop == intentNone {
			s.log.Warn("liveness check failed: restarting", "process", r.p.Name, "detail", e.detail)
			r.reason = "liveness check failed: " + e.detail
			inc.failedBy = r.p.Live
			s.requestStop(r, intentFail, now)
		}
	case watchdogEv:
		s.onWatchdog(r, inc, e, now)
	case extendEv:
		s.onExtend(r, inc, e)
	case errnoEv:
		inc.errno = e.errno
	case stoppingEv:
		s.onStopping(r, inc, now)
	case mainPIDEv:
		s.onMainPID(r, inc, e.pid)
	case reloadingEv:
		s.onReloading(r, inc, e)
	case reloadCmdDoneEv:
		s.onReloadCmdDone(r, inc, e)
	case failedEv:
		if inc.intent == intentNone && r.state != Stopping {
			s.log.Warn("start failed", "process", r.p.Name, "reason", e.reason)
			r.reason, inc.intent = e.reason, intentFail // its exit, next, is a failed start
		}
	case statusEv:
		inc.status = e.status
	case stopCmdDoneEv:
		s.onStopCmdDone(r, inc, e, now)
	case seenEv:
		inc.seen = true
	}
}

// onExited handles the exit of r's current incarnation inc. A stopping
// leader's group must be empty before its stop is over; in teardown also a
// leader that exited by itself, whose group members its dependencies must
// still outlive.
func (s *Supervisor) onExited(r *record, inc *incarnation, ex proc.Exit, now time.Time) {
	if inc.lingering != nil {
		return
	}
	if (r.state == Stopping || s.phase == PhaseStopping) && !s.cancelled && inc.child.GroupAlive() {
		inc.lingering, inc.pollAt = &ex, now.Add(groupPoll)
		return
	}
	s.onExit(r, ex, now)
}

func (s *Supervisor) onReadyEv(r *record, inc *incarnation, e readyEv, now time.Time) {
	stopping := r.state == Stopping || r.wantStop != intentNone || inc.lingering != nil
	if probedWhileStopping(r) && (stopping || s.phase == PhaseStopping) {
		s.onReadyWhileStopping(r, e.ready, e.detail) // its ready state only
		return
	}
	// A stopping incarnation's readiness (a ready line printed in its
	// TERM trap) must not start a dependent against a dying process.
	if stopping {
		return
	}
	if inc.reloading && e.ready && reloadNotified(r) {
		s.endReload(r, inc) // and on: READY=1 is readiness too
	}
	s.onReady(r, e.ready, e.detail, now)
}

// onStopCmdDone ends inc's stop.command in flight.
func (s *Supervisor) onStopCmdDone(r *record, inc *incarnation, e stopCmdDoneEv, now time.Time) {
	if !inc.stopCmd {
		return // cut off already (an exit, a SIGKILL at the deadline)
	}
	inc.stopCmd = false
	inc.cancelHook = nil
	s.tl.StopCommand(r.p.Name, inc.gen, true, e.err, now)
	if e.err != nil {
		s.log.Warn("stop command failed", "process", r.p.Name, "err", e.err)
	}
	if !inc.killed && r.state == Stopping {
		s.sendStopSignal(r) // an early command's process waits for its turn
	}
}
