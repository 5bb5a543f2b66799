// Publishing the loop's state as an immutable Snapshot for /status, /readyz
// and the control socket, at most every publishEvery while busy.

package supervisor

import (
	"slices"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// publishEvery spaces snapshots while a big start goes on in waves.
const publishEvery = 100 * time.Millisecond

// publishMin spaces snapshots otherwise: what /status and /readyz show is
// at most this much older than the loop's state.
const publishMin = time.Millisecond

// publish stores a fresh immutable snapshot.
func (s *Supervisor) publish() {
	snap := &Snapshot{Phase: s.phase.String(), Processes: make([]ProcessSnapshot, 0, len(s.recs)), Generation: s.ops.generation}
	allReady := true
	if s.sorted == nil { // rebuilt after a reload changes the records
		s.sorted = slices.Clone(s.recs)
		slices.SortFunc(s.sorted, func(a, b *record) int { return strings.Compare(a.p.Name, b.p.Name) })
	}
	for _, r := range s.sorted {
		if r.op.gone && r.cur.child == nil && r.cur.lingering == nil {
			continue // removed by a reload, and stopped
		}
		ps := ProcessSnapshot{
			Name:      r.p.Name,
			Type:      r.p.Type.String(),
			Terminal:  terminalOf(r.p),
			State:     r.state.String(),
			Pid:       r.cur.pid,
			Up:        r.cur.child != nil,
			Ready:     s.shownReady(r),
			Restarts:  r.count.restarts,
			ExitCode:  r.exitCode,
			StartedAt: r.cur.startedAt,
			ReadyAt:   r.cur.readyAt,
			ExitedAt:  r.exitedAt,
			Status:    r.cur.status,
			Reason:    r.reason,
			OOMKills:  r.count.oomKills,

			RuleMatches:      ruleMatchesCopy(r),
			WatchdogFailures: r.count.watchdogMisses,
			NextRun:          r.sched.nextRun,
			ScheduledRuns:    r.sched.runs,
			SkippedRuns:      r.sched.skipped,
			WatchEvents:      r.count.watchEvents,
		}
		if !r.cur.readyAt.IsZero() {
			ps.StartDuration = r.cur.readyAt.Sub(r.cur.startedAt)
		}
		if r.state == Running && r.cur.reloading {
			ps.State = ShownReloading // still Running: ready, serving (reloadproc.go)
		}
		if r.state == Starting && ps.Reason == "" && r.cur.readyDetail != "" {
			ps.Reason = "not ready yet: " + r.cur.readyDetail
		}
		if r.state == Pending {
			ps.WaitingFor = s.waitingFor(r)
		}
		if !s.isReady(r) {
			allReady = false
			snap.NotReady = append(snap.NotReady, r.p.Name+" ("+r.state.String()+")")
		}
		snap.Processes = append(snap.Processes, ps)
	}
	// Processes and NotReady are in name order already (s.sorted).
	if s.phase == PhaseStopping {
		allReady = false
		snap.NotReady = append([]string{"podvisor (stopping)"}, snap.NotReady...)
	}
	snap.Ready = allReady
	s.snap.Store(snap)
	s.changed.notify()
}

// terminalOf says what `podvisor attach` reaches of p.
func terminalOf(p *config.Process) string {
	switch {
	case p.TTY:
		return "tty"
	case p.Stdin:
		return "stdin"
	}
	return ""
}
