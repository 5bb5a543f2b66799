package supervisor

import "github.com/podvisor/podvisor/internal/proc"

// event is the sealed sum type of everything sent to the loop. Every event
// about a process carries its index and the generation (incarnation) it is
// about; the loop drops events whose generation is not the record's current
// one, so a late probe result or exit of an old incarnation changes nothing.
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

func (exitedEv) isEvent()      {}
func (readyEv) isEvent()       {}
func (probeFailedEv) isEvent() {}
func (liveEv) isEvent()        {}
func (startupEv) isEvent()     {}
func (statusEv) isEvent()      {}
func (stopCmdDoneEv) isEvent() {}

// procEvent is an event about one incarnation of a process: the loop looks
// the incarnation up once (incarnationOf) and drops the event when it is
// about an earlier spawn.
type procEvent interface {
	event
	about() (idx int, gen uint64)
}

func (e exitedEv) about() (int, uint64)      { return e.idx, e.gen }
func (e readyEv) about() (int, uint64)       { return e.idx, e.gen }
func (e probeFailedEv) about() (int, uint64) { return e.idx, e.gen }
func (e liveEv) about() (int, uint64)        { return e.idx, e.gen }
func (e startupEv) about() (int, uint64)     { return e.idx, e.gen }
func (e statusEv) about() (int, uint64)      { return e.idx, e.gen }
func (e stopCmdDoneEv) about() (int, uint64) { return e.idx, e.gen }
func (e watchdogEv) about() (int, uint64)    { return e.idx, e.gen }
func (e extendEv) about() (int, uint64)      { return e.idx, e.gen }
func (e errnoEv) about() (int, uint64)       { return e.idx, e.gen }
func (e seenEv) about() (int, uint64)        { return e.idx, e.gen }

// appliesAfterExit reports whether ev still counts once its incarnation's
// exit was heard: the reports it made (STATUS=, ERRNO=, seen running) are
// kept with it; nothing else acts on a process that is gone.
func appliesAfterExit(ev procEvent) bool {
	switch ev.(type) {
	case statusEv, errnoEv, seenEv:
		return true
	}
	return false
}
