package launch

// The main process of an incarnation (docs/reference.md, MAINPID= and
// daemon.pid_file): the leader podvisor spawned, until the process names
// another (a forking parent's daemon). From then on the named process is
// supervised in its place: /status shows its pid, its exit is the
// process's exit, and stop signals go to it (its group if it leads one) as
// well as to the leader's group while that has members.
//
// Who may be named: a process must not be able to make podvisor (often
// root) signal, or stand in for, a process it could not signal itself
// (docs/reliability.md, the hardening threat model). A pid is accepted
// only when it is alive, is not podvisor, is not supervised already (the
// leader of another process, or another one's main pid) and
//   - it is in the incarnation's tree: the leader, a descendant of the
//     leader or of the current main pid, or a member of the leader's
//     process group (which podvisor signals anyway); or
//   - it is an orphan of podvisor (its parent exited: the classic double
//     fork) that runs as the process's own user (real uid): the process
//     could signal it itself, so naming it grants nothing.
// podvisor must become its reaper to hear of its exit: it is when its
// parent exits (podvisor is PID 1 or a child subreaper). A named process
// whose own parent outlives it and reaps it is not heard of.

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// mainProc is the main process of one incarnation; it is the Child the
// supervisor holds.
type mainProc struct {
	reaper *proc.Reaper
	leader *proc.Child // set right after the spawn (setLeader)
	// spawned is closed once leader is set: the leader's exit can come
	// before Spawn returns.
	spawned chan struct{}
	uid     int // the process's real uid
	exited  func(proc.Exit)
	sock    *health.NotifySocket // nil without one: else it accepts the main pid as a sender
	// daemon, if set, takes a successful exit of the leader instead of
	// the supervisor: the pid file is read then (daemon.go).
	daemon func(proc.Exit)

	mu         sync.Mutex
	main       *proc.Child // nil: the leader is the main process
	leaderDone bool        // the leader's exit was passed on
}

var _ supervisor.Child = (*mainProc)(nil)

func newMainProc(r *proc.Reaper, uid int, sock *health.NotifySocket, exited func(proc.Exit)) *mainProc {
	return &mainProc{reaper: r, uid: uid, sock: sock, exited: exited, spawned: make(chan struct{})}
}

// setLeader records the spawned leader.
func (m *mainProc) setLeader(c *proc.Child) {
	m.leader = c
	close(m.spawned)
}

// Pid is the main pid.
func (m *mainProc) Pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pidLocked()
}

func (m *mainProc) pidLocked() int {
	if m.main != nil {
		return m.main.Pid()
	}
	return m.leader.Pid()
}

// Signal sends sig to the main process (its group if it leads one) and to
// the leader's group while it has members.
func (m *mainProc) Signal(sig proc.Signal) error {
	m.mu.Lock()
	main := m.main
	m.mu.Unlock()
	lerr := m.leader.Signal(sig)
	if main == nil {
		return lerr
	}
	err := main.Signal(sig)
	if lerr != nil && !errors.Is(lerr, os.ErrProcessDone) && err == nil {
		err = lerr
	}
	return err
}

// GroupAlive reports whether the leader's group or the main's still has
// members.
func (m *mainProc) GroupAlive() bool {
	m.mu.Lock()
	main := m.main
	m.mu.Unlock()
	return m.leader.GroupAlive() || main != nil && main.GroupAlive()
}

// leaderExited is the reaper's news of the leader's exit: the process's
// exit, unless another process is its main one by now.
func (m *mainProc) leaderExited(ex proc.Exit) {
	m.mu.Lock()
	adopted := m.main != nil
	m.mu.Unlock()
	switch {
	case adopted:
	case m.daemon != nil && ex.Status.Exited():
		go func() { // not on the reaper's goroutine: it reads a file, may wait for it
			<-m.spawned
			m.daemon(ex)
		}()
	default:
		m.mu.Lock()
		m.leaderDone = true
		m.mu.Unlock()
		m.exited(ex)
	}
}

// adoptedExited is the exit of an adopted process: the process's exit if
// it is still the main one (not replaced by a later MAINPID=).
func (m *mainProc) adoptedExited(ex proc.Exit) {
	m.mu.Lock()
	current := m.main != nil && m.main.Pid() == ex.Pid
	m.mu.Unlock()
	if current {
		m.exited(ex)
	}
}

// adopt makes pid the main process, if it may be (see the top of this
// file); afterExit allows it once the leader's exit was passed on (a pid
// file is read after the leader exited, and its exit was kept back).
func (m *mainProc) adopt(pid int, afterExit bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leaderDone && !afterExit {
		return errors.New("the process has exited")
	}
	if pid == m.pidLocked() {
		return nil
	}
	if err := m.mayAdopt(pid); err != nil {
		return err
	}
	c, err := m.reaper.Adopt(pid, m.adoptedExited)
	if err != nil {
		return err
	}
	m.main = c
	if m.sock != nil {
		m.sock.AllowSender(pid)
	}
	return nil
}

// mayAdopt says why pid may not be named, or nil. The caller holds mu.
func (m *mainProc) mayAdopt(pid int) error {
	info, err := proc.ReadInfo(pid)
	if err != nil {
		return fmt.Errorf("pid %d is not running", pid)
	}
	leader := m.leader.Pid()
	switch {
	case health.IsDescendant(pid, leader), info.Pgrp == leader:
	case m.main != nil && health.IsDescendant(pid, m.main.Pid()):
	case info.PPid == os.Getpid() && info.UID == m.uid:
	case info.PPid == os.Getpid():
		return fmt.Errorf("pid %d is an orphan of podvisor running as uid %d, not as the process's uid %d", pid, info.UID, m.uid)
	default:
		return fmt.Errorf("pid %d is not in the process's tree (parent %d, process group %d)", pid, info.PPid, info.Pgrp)
	}
	return nil
}
