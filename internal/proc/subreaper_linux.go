package proc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes podvisor the child subreaper of its descendants, so
// orphaned grandchildren are reparented to it (and reaped by the Reaper)
// instead of to the namespace's init. It is a no-op as PID 1, which gets
// orphans anyway. If it fails, podvisor should warn loudly and go on (D19):
// orphans then escape to init and the final sweep cannot find them.
func BecomeSubreaper() error {
	if os.Getpid() == 1 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	return nil
}

// Descendants returns the pids of every process below pid (children,
// grandchildren, reparented orphans), found by a recursive ppid walk over
// /proc/*/stat, repeated until two walks agree (a fork during a walk can hide a
// process). When podvisor is PID 1 and pid is 1, it returns every process in
// the namespace except podvisor itself and kernel threads, including processes
// entered from outside (docker exec) whose parent is not visible. Zombies are
// included. The result is sorted.
func Descendants(pid int) []int {
	procs := descendants(pid)
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.pid
	}
	return out
}

func descendants(pid int) []stat {
	var prev []stat
	for i := range 10 {
		cur := walk(pid)
		if i > 0 && sameProcs(prev, cur) {
			return cur
		}
		prev = cur
	}
	return prev
}

func walk(root int) []stat {
	all, err := allStats()
	if err != nil {
		return nil
	}
	var out []stat
	if root == 1 && os.Getpid() == 1 {
		for _, s := range all {
			if s.pid != 1 && s.flags&pfKthread == 0 {
				out = append(out, s)
			}
		}
		return out
	}
	kids := make(map[int][]stat)
	for _, s := range all {
		kids[s.ppid] = append(kids[s.ppid], s)
	}
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p] {
			if !seen[k.pid] {
				seen[k.pid] = true
				out = append(out, k)
				queue = append(queue, k.pid)
			}
		}
	}
	slices.SortFunc(out, func(a, b stat) int { return a.pid - b.pid })
	return out
}

func sameProcs(a, b []stat) bool {
	return slices.EqualFunc(a, b, func(x, y stat) bool { return x.pid == y.pid && x.start == y.start })
}

// Sweep is what KillDescendants did.
type Sweep struct {
	Terminated int // sent SIGTERM (and SIGCONT)
	Killed     int // still alive after grace, sent SIGKILL
	Remaining  int // still alive when ctx ended
}

// KillDescendants is the final sweep before podvisor exits, so nothing it
// started outlives it (daemonized grandchildren, processes that changed their
// group or session): SIGTERM and SIGCONT to every live descendant, up to grace
// for them to go, then SIGKILL to the rest and wait until they are gone or ctx
// is done. Descendants that appear meanwhile are treated the same way. Exited
// processes are reaped by the Reaper, which must be running; a zombie counts
// as gone. As PID 1 it covers every process in the namespace.
func KillDescendants(ctx context.Context, grace time.Duration, log *slog.Logger) Sweep {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	self := os.Getpid()
	var sw Sweep
	if noDescendants() {
		return sw
	}
	termed := make(map[procID]bool)
	killed := make(map[procID]bool)
	// The grace period starts when the first SIGTERMs have gone out, not
	// before the first walk: on a loaded machine that walk can take longer
	// than the grace, and nobody would get a SIGTERM at all.
	var deadline time.Time
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		live := alive(descendants(self))
		if len(live) == 0 {
			return sw
		}
		escalate := !deadline.IsZero() && !time.Now().Before(deadline)
		var newTerm, newKill int
		for _, p := range live {
			id := procID{p.pid, p.start}
			switch {
			case escalate && !killed[id]:
				killed[id] = true
				newKill++
				signalProc(p, syscall.SIGKILL)
			case !escalate && !termed[id]:
				termed[id] = true
				newTerm++
				signalProc(p, syscall.SIGTERM)
				signalProc(p, syscall.SIGCONT)
			}
		}
		if newTerm > 0 {
			log.Info("final sweep: terminating descendants", "count", newTerm)
		}
		if newKill > 0 {
			log.Warn("final sweep: descendants outlived the grace period, killing", "count", newKill, "grace", grace)
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(grace)
		}
		sw.Terminated += newTerm
		sw.Killed += newKill
		select {
		case <-ctx.Done():
			sw.Remaining = len(alive(descendants(self)))
			if sw.Remaining > 0 {
				log.Error("final sweep: descendants still alive", "count", sw.Remaining)
			}
			return sw
		case <-tick.C:
		}
	}
}

// noDescendants reports, without walking /proc, that there is nothing to
// sweep: a child subreaper with no children at all has no descendants, as
// every orphan below it would have become its child. (The walks cost 1-2 ms
// at every exit on a host with some hundred processes.) PID 1 always walks:
// it also sweeps processes entered from outside, which are not its children.
func noDescendants() bool {
	if os.Getpid() == 1 {
		return false
	}
	var sub int
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&sub)), 0, 0, 0); err != nil || sub == 0 {
		return false
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WSTOPPED|unix.WCONTINUED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD)
}

type procID struct {
	pid   int
	start uint64
}

func alive(ps []stat) []stat {
	var out []stat
	for _, p := range ps {
		if !p.zombie() {
			out = append(out, p)
		}
	}
	return out
}

// signalProc signals p only if the pid still names the same process (same
// start time), using a pidfd so that the check and the signal refer to one
// process even if the pid is recycled in between.
func signalProc(p stat, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		if s, err := readStat(p.pid); err == nil && s.start == p.start {
			_ = unix.Kill(p.pid, sig)
		}
		return
	}
	if err != nil {
		return // gone
	}
	defer unix.Close(fd)
	if s, err := readStat(p.pid); err != nil || s.start != p.start {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}
