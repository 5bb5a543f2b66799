// Package supervisor decides what happens to the processes of one config; it
// never blocks and does no I/O of its own (internal/launch does the effects).
//
// One goroutine, the loop (loop.go), owns all state. Events come in through
// the inbox (events.go: every event type); each is dispatched once (handle),
// then step (step.go) moves every record as far as it can go and nextWake
// (wake.go) arms the timer for the earliest deadline step acts on.
//
// A record (types.go) is what outlives a spawn: the config, dependencies,
// the State, counters, backoff, schedule and operator holds. An incarnation
// (incarnation.go) is one spawn: its child, readiness, stop intent and every
// deadline. A spawn makes a new incarnation; a restart with overlap keeps the
// old one in record.old until it exits. Events name their incarnation (idx,
// gen) and incarnationOf looks it up once, dropping those of an older spawn.
// Every state and enum, and the transition table setState enforces, are in
// state.go (and docs/architecture.md, "States").
//
// How to add a lifecycle feature: per-spawn state goes in incarnation,
// per-process state in record (a small struct if it is a group); its event
// goes in events.go with a case in handleProc; a deadline gets one function
// in wake.go that both step and nextWake call; a new move between states
// goes into the transitions table and docs/architecture.md; what users can
// observe of it goes out through Options.OnEvent (internal/observe) or the
// Snapshot (publish.go). Effects (a syscall, a file, a socket) go behind an
// interface of types.go, implemented in internal/launch.
//
// The kubelet's pace (pace.go, Options.Pace, set by kube play): the start or
// exit of a process named in Pace.Noticed holds for its dependents, its own
// restart and the end of a job run only from the next tick of a per-run
// relist schedule, as a node's kubelet notices a container at its next
// relist. The schedule is a pure function of times; a waiting step is one
// more deadline for nextWake (paceWake, jobsDoneAt, backoffEnd).
package supervisor
