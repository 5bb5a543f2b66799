// Every event the loop receives. An event about a process names its
// incarnation (index and generation, procEvent); the loop looks it up once
// (incarnationOf, incarnation.go) and drops it when it is about an earlier
// spawn, so a late probe result or exit of an old incarnation changes nothing.

package supervisor

import (
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// event is the sealed sum type of everything sent to the loop.
type event interface{ isEvent() }

type exitedEv struct {
	idx  int
	gen  uint64
	exit proc.Exit
}

// readyEv is a readiness transition: from a polled probe, a log-line match or a
// notification.
type readyEv struct {
	idx    int
	gen    uint64
	ready  bool
	detail string
}

// completedReadyEv is a result of the ready check of a oneshot or job that
// completed before the check passed (completion.go).
type completedReadyEv struct {
	idx    int
	gen    uint64
	ready  bool
	detail string
}

// probeFailedEv carries the detail of a failed readiness attempt while no
// transition has happened yet.
type probeFailedEv struct {
	idx    int
	gen    uint64
	detail string
}

// liveEv is a liveness transition.
type liveEv struct {
	idx     int
	gen     uint64
	healthy bool
	detail  string
}

// startupEv says a oneshot's or job's startup check passed (ok) or failed
// failure_threshold times in a row.
type startupEv struct {
	idx    int
	gen    uint64
	ok     bool
	detail string
}

// statusEv carries a STATUS= line from the notify protocol.
type statusEv struct {
	idx    int
	gen    uint64
	status string
}

// stopCmdDoneEv says a stop.command finished (or was cut off).
type stopCmdDoneEv struct {
	idx int
	gen uint64
	err error
}

// watchdogEv is a WATCHDOG=1 (or =trigger) from incarnation gen of a process.
type watchdogEv struct {
	idx     int
	gen     uint64
	trigger bool
	at      time.Time // when the launcher read it, not when the loop did
}

func (watchdogEv) isEvent() {}

// extendEv is an EXTEND_TIMEOUT_USEC= from incarnation gen of a process.
type extendEv struct {
	idx int
	gen uint64
	by  time.Duration
	at  time.Time
}

// errnoEv is an ERRNO= from incarnation gen of a process.
type errnoEv struct {
	idx   int
	gen   uint64
	errno int
}

// stoppingEv is a STOPPING=1 from incarnation gen of a process.
type stoppingEv struct {
	idx int
	gen uint64
}

// mainPIDEv says incarnation gen of a process has a new main pid.
type mainPIDEv struct {
	idx int
	gen uint64
	pid int
}

// failedEv gives the reason incarnation gen failed to start; its exit
// follows.
type failedEv struct {
	idx    int
	gen    uint64
	reason string
}

// reloadingEv is a RELOADING=1 from incarnation gen of a process, sent at
// at (zero: the message had no MONOTONIC_USEC=).
type reloadingEv struct {
	idx int
	gen uint64
	at  time.Time
}

// reloadCmdDoneEv says a reload.command finished.
type reloadCmdDoneEv struct {
	idx int
	gen uint64
	err error
}

func (reloadingEv) isEvent()     {}
func (reloadCmdDoneEv) isEvent() {}
func (mainPIDEv) isEvent()       {}
func (failedEv) isEvent()        {}
func (extendEv) isEvent()        {}
func (errnoEv) isEvent()         {}
func (stoppingEv) isEvent()      {}

// seenEv says a sidecar has been seen running after its exec.
type seenEv struct {
	idx int
	gen uint64
}

func (seenEv) isEvent() {}

// watchEv says the files of a process's watch changed (after the debounce).
type watchEv struct {
	idx  int
	name string // tests: the process by name, resolved in the loop (idx unused)
	file string // one of the changed files, for the log
}

func (watchEv) isEvent() {}

// commandEv is an operator command for the loop.
type commandEv struct {
	op    string
	req   Request
	cfg   *config.Config // reload: the new config, loaded outside the loop
	err   error          // reload: loading or validating it failed
	reply chan Response
}

// hangupLoadedEv is the result of the config load a SIGHUP started.
type hangupLoadedEv struct {
	cfg *config.Config
	err error
}

func (commandEv) isEvent()      {}
func (hangupLoadedEv) isEvent() {}

func (exitedEv) isEvent()         {}
func (readyEv) isEvent()          {}
func (completedReadyEv) isEvent() {}
func (probeFailedEv) isEvent()    {}
func (liveEv) isEvent()           {}
func (startupEv) isEvent()        {}
func (statusEv) isEvent()         {}
func (stopCmdDoneEv) isEvent()    {}

// procEvent is an event about one incarnation of a process: the loop looks
// the incarnation up once (incarnationOf) and drops the event when it is
// about an earlier spawn.
type procEvent interface {
	event
	about() (idx int, gen uint64)
}

func (e exitedEv) about() (int, uint64)         { return e.idx, e.gen }
func (e readyEv) about() (int, uint64)          { return e.idx, e.gen }
func (e completedReadyEv) about() (int, uint64) { return e.idx, e.gen }
func (e probeFailedEv) about() (int, uint64)    { return e.idx, e.gen }
func (e liveEv) about() (int, uint64)           { return e.idx, e.gen }
func (e startupEv) about() (int, uint64)        { return e.idx, e.gen }
func (e statusEv) about() (int, uint64)         { return e.idx, e.gen }
func (e stopCmdDoneEv) about() (int, uint64)    { return e.idx, e.gen }
func (e watchdogEv) about() (int, uint64)       { return e.idx, e.gen }
func (e extendEv) about() (int, uint64)         { return e.idx, e.gen }
func (e errnoEv) about() (int, uint64)          { return e.idx, e.gen }
func (e stoppingEv) about() (int, uint64)       { return e.idx, e.gen }
func (e mainPIDEv) about() (int, uint64)        { return e.idx, e.gen }
func (e failedEv) about() (int, uint64)         { return e.idx, e.gen }
func (e reloadingEv) about() (int, uint64)      { return e.idx, e.gen }
func (e reloadCmdDoneEv) about() (int, uint64)  { return e.idx, e.gen }
func (e seenEv) about() (int, uint64)           { return e.idx, e.gen }

// appliesAfterExit reports whether ev still counts once its incarnation's
// exit was heard: the reports it made (STATUS=, ERRNO=, seen running) are
// kept with it, and a completed process's ready check and teardown
// stop.command go on (an exit cuts off any other hook: onStopCmdDone drops
// its report); nothing else acts on a process that is gone.
func appliesAfterExit(ev procEvent) bool {
	switch ev.(type) {
	case statusEv, errnoEv, seenEv, completedReadyEv, stopCmdDoneEv:
		return true
	}
	return false
}
