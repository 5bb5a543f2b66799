// Starting processes: waves of launches, at most spawnParallelism at once, and
// what a launch's result does to its record.

package supervisor

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// spawnParallelism bounds concurrent launches in one wave. Each launch
// spends most of its time waiting for the kernel (fork, exec), so a few in
// flight keep both cores busy when hundreds of processes start together.
const spawnParallelism = 4

// startAll launches a wave of processes. Launch touches no supervisor state,
// so up to spawnParallelism run at once; the results are applied here, by
// the loop, in record order. While it waits for launches the loop still
// answers pings, so /livez stays prompt however long a wave takes on a busy
// machine. Once the wave has taken waveBudget no further launch begins (the
// loop must get back to signals and exits while thousands start); it returns
// how many of rs, from the front, it launched.
func (s *Supervisor) startAll(rs []*record, now time.Time) int {
	type result struct {
		i     int
		child Child
		err   error
	}
	res := make([]result, len(rs))
	prepare := func(i int) Hooks {
		r := rs[i]
		r.cur = spawn(r.p, r.cur.gen+1, now)
		s.tl.Spawned(r.p.Name, r.cur.gen, now)
		gen, idx := r.cur.gen, r.idx
		if r.sched.runDue {
			r.sched.runDue = false
			r.sched.runs++
		}
		return Hooks{
			Exited: func(ex proc.Exit) { s.send(exitedEv{idx: idx, gen: gen, exit: ex}) },
			Ready:  func(detail string) { s.send(readyEv{idx: idx, gen: gen, ready: true, detail: detail}) },
			Status: func(st string) { s.send(statusEv{idx: idx, gen: gen, status: st}) },
			Watchdog: func(trigger bool) {
				s.send(watchdogEv{idx: idx, gen: gen, trigger: trigger, at: time.Now()})
			},
			Extend:    func(d time.Duration) { s.send(extendEv{idx: idx, gen: gen, by: d, at: time.Now()}) },
			Errno:     func(n int) { s.send(errnoEv{idx: idx, gen: gen, errno: n}) },
			Stopping:  func() { s.send(stoppingEv{idx: idx, gen: gen}) },
			MainPID:   func(pid int) { s.send(mainPIDEv{idx: idx, gen: gen, pid: pid}) },
			Failed:    func(why string) { s.send(failedEv{idx: idx, gen: gen, reason: why}) },
			Reloading: func(at time.Time) { s.send(reloadingEv{idx: idx, gen: gen, at: at}) },
		}
	}
	n := len(rs)
	if n == 1 {
		h := prepare(0)
		res[0].child, res[0].err = s.launcher.Launch(rs[0].p, rs[0].cur.gen, h)
	} else {
		budget := time.Now().Add(waveBudget)
		results := make(chan result, spawnParallelism)
		launched, inflight := 0, 0
		for launched < n || inflight > 0 {
			if launched < n && inflight < spawnParallelism {
				if launched > 0 && time.Now().After(budget) {
					n = launched // the rest waits for the next step
					continue
				}
				i, r, h := launched, rs[launched], prepare(launched)
				go func() {
					c, err := s.launcher.Launch(r.p, r.cur.gen, h)
					results <- result{i, c, err}
				}()
				launched++
				inflight++
				continue
			}
			select {
			case out := <-results:
				res[out.i] = out
				inflight--
			case reply := <-s.pings:
				close(reply)
			}
		}
	}
	for i, r := range rs[:n] {
		s.started(r, res[i].child, res[i].err, now)
	}
	return n
}

// waveBudget bounds the time a wave goes on starting launches. Each wave
// ends by waiting for the launches in flight, which idles spawn capacity
// for part of a launch: a shorter budget answers /livez sooner but starts
// thousands more slowly (10 ms cost a 5,000 start about a third more, and
// 25 ms with waves of 128 a 200 start some 15%: 40 ms keeps most starts of
// hundreds in one wave and /livez within about 50 ms).
const waveBudget = 40 * time.Millisecond

// started records the result of one launch.
func (s *Supervisor) started(r *record, child Child, err error, now time.Time) {
	if err != nil {
		s.tl.Exited(r.p.Name, r.cur.gen, -1, false, "spawn failed", now) // the incarnation ends unstarted
		var se *proc.SpawnError
		if errors.As(err, &se) && !se.Retryable() {
			// Not found, not executable, bad user: retrying cannot help.
			r.reason = err.Error()
			s.fatal(r, -1, "cannot start: "+err.Error(), now)
			return
		}
		// Out of pids, fds or memory: a failed start, retried with backoff
		// per the restart policy (docs/reliability.md, D7).
		r.reason = "cannot start: " + err.Error()
		s.onFailure(r, -1, 0, now)
		return
	}
	r.cur.child, r.cur.pid = child, child.Pid()
	s.watchSeen(r, child)
	s.alive++
	r.everStarted = true
	r.cur.startedAt = now
	r.reason = ""
	s.tl.Started(r.p.Name, r.cur.gen, r.cur.pid, time.Now())
	// At info, so the start order shows in the log (a process without a
	// readiness check logs nothing else when it starts). LogAttrs: no
	// boxing of the attributes into a []any on this per-start path.
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "started", slog.String("process", r.p.Name), slog.Int("pid", r.cur.pid))

	ready := r.p.Ready
	switch {
	case r.p.Type != config.Service:
		s.setState(r, Running) // a oneshot or job is "ready" only once it completed
		if startupChecked(r) && r.p.StartTimeout > 0 {
			r.cur.due = now.Add(r.p.StartTimeout) // jobprobes.go
		}
	case ready == nil && r.p.Startup == nil:
		s.setState(r, Running)
		r.cur.ready, r.cur.readyAt = true, now
		s.tl.Ready(r.p.Name, r.cur.gen, time.Now())
	default:
		s.setState(r, Starting)
		r.cur.remindAt = now.Add(reminderEvery)
		if r.p.StartTimeout > 0 {
			r.cur.due = now.Add(r.p.StartTimeout)
		}
	}
	r.cur.startedUp = startupCheck(r.p) == nil
	switch gate := startupCheck(r.p); {
	case gate != nil && gate == r.p.Startup:
		s.watch(s.incarnationCtx(r), r, gate, "startup", now) // jobprobes.go
	case ready != nil && isPolled(ready.Kind):
		s.watchReady(r, now)
	}
	if r.p.Live != nil && r.state == Running && !startupChecked(r) {
		s.watch(s.incarnationCtx(r), r, r.p.Live, "live", now)
	}
}
