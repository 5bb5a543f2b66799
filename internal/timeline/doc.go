package timeline

import (
	"github.com/podvisor/podvisor/api"
	"sort"
	"time"
)

// The document's types are the API's (package api, schema/openapi.json).
type (
	Doc         = api.Timeline
	Process     = api.TimelineProcess
	Incarnation = api.Incarnation
	Link        = api.ChainLink
	Shutdown    = api.Shutdown
	Stop        = api.ShutdownStop
)

// readyAt is when p first became ready: its Ready instant, or for a oneshot
// or job its first successful exit. spawned is the spawn of that incarnation.
func readyAt(p Process) (at, spawned time.Time, ok bool) {
	for _, in := range p.Incarnations {
		var t *time.Time
		if p.Type == "service" || p.Type == "" {
			t = in.Ready
		} else if in.Exited != nil && in.Success {
			t = in.Exited
		}
		if t != nil && in.Spawned != nil {
			return *t, *in.Spawned, true
		}
	}
	return time.Time{}, time.Time{}, false
}

// heldAt is when condition cond on p first held.
func heldAt(p Process, cond string) (time.Time, bool) {
	if cond == "started" {
		for _, in := range p.Incarnations {
			if in.Started != nil {
				return *in.Started, true
			}
		}
		return time.Time{}, false
	}
	at, _, ok := readyAt(p)
	return at, ok
}

// CriticalChain finds the process that became ready last (jobs excluded:
// they end the run rather than serve; scheduled oneshots too: their runs
// come at the ticks, after the start-up) and walks back through the dependency
// that was satisfied last at each step, as systemd-analyze critical-chain
// does. The result runs from the first process to the last one ready.
func CriticalChain(procs []Process) []Link {
	byName := make(map[string]Process, len(procs))
	var last string
	var lastAt time.Time
	for _, p := range procs {
		byName[p.Name] = p
		if p.Type == "job" || p.Scheduled {
			continue
		}
		if at, _, ok := readyAt(p); ok && (last == "" || at.After(lastAt)) {
			last, lastAt = p.Name, at
		}
	}
	if last == "" {
		return []Link{}
	}
	origin := time.Time{}
	for _, p := range procs {
		for _, in := range p.Incarnations {
			if in.Spawned != nil && (origin.IsZero() || in.Spawned.Before(origin)) {
				origin = *in.Spawned
			}
		}
	}
	var chain []Link
	seen := map[string]bool{}
	gates := ""
	for name := last; name != "" && !seen[name]; {
		seen[name] = true
		p := byName[name]
		at, spawned, _ := readyAt(p)
		link := Link{Process: name, Gates: gates}
		if !spawned.IsZero() {
			link.SpawnedAt = spawned.Sub(origin).Seconds()
			link.ReadyAt = at.Sub(origin).Seconds()
			link.TimeToReady = at.Sub(spawned).Seconds()
		} else if st, ok := heldAt(p, "started"); ok {
			link.SpawnedAt = st.Sub(origin).Seconds()
		}
		chain = append(chain, link)
		// The dependency satisfied last is the one that held this one back.
		next, nextAt := "", time.Time{}
		for _, d := range p.DependsOn {
			dp, ok := byName[d.Name]
			if !ok {
				continue
			}
			if t, ok := heldAt(dp, d.Condition); ok && (next == "" || t.After(nextAt)) {
				next, nextAt, gates = d.Name, t, d.Condition
			}
		}
		name = next
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// shutdownReport fills in td from the incarnations the teardown had to
// end: those not gone when it began, including those launched after it
// began (the rest of a wave whose launch failed), and the last incarnation
// of the process whose failure began it (it exited, or failed to spawn,
// just before).
func shutdownReport(td Shutdown, procs []Process, now time.Time) *Shutdown {
	end := td.Ended
	secs := func(t time.Time) *float64 { v := t.Sub(td.Began).Seconds(); return &v }
	td.Processes = []Stop{}
	for _, p := range procs {
		for i, in := range p.Incarnations {
			cause := p.Name == td.Process && i == len(p.Incarnations)-1
			if in.Spawned == nil && in.Started == nil || in.Exited != nil && in.Exited.Before(td.Began) && !cause {
				continue
			}
			s := Stop{Process: p.Name, Signal: in.Signal, SIGKILLed: in.KillSent != nil, ExitCode: in.ExitCode, Cause: cause}
			if in.StopRequested != nil && !in.StopRequested.Before(td.Began) {
				s.RequestedAt = secs(*in.StopRequested)
			}
			switch {
			case in.Started == nil && in.Exited != nil:
				s.EndedBy = "spawn failed"
			case in.Exited == nil:
				s.EndedBy = "running"
			case in.KillSent != nil && !in.Exited.Before(*in.KillSent):
				s.EndedBy = "SIGKILL"
			case in.SignalSent != nil && !in.Exited.Before(*in.SignalSent):
				s.EndedBy = "signal"
			case in.StopCommandBegan != nil:
				s.EndedBy = "stop.command"
			default:
				s.EndedBy = "exited"
			}
			if in.Exited != nil {
				s.ExitedAt = secs(*in.Exited)
				if in.StopRequested != nil {
					v := in.Exited.Sub(*in.StopRequested).Seconds()
					s.StopSeconds = &v
				}
			}
			td.Processes = append(td.Processes, s)
		}
	}
	sort.SliceStable(td.Processes, func(i, j int) bool {
		a, b := td.Processes[i].ExitedAt, td.Processes[j].ExitedAt
		switch {
		case a == nil:
			return false
		case b == nil:
			return true
		}
		return *a < *b
	})
	if end != nil {
		td.UsedSeconds = end.Sub(td.Began).Seconds()
	} else {
		td.UsedSeconds = now.Sub(td.Began).Seconds()
	}
	td.LeftSeconds = max(td.BudgetSeconds-td.UsedSeconds, 0)
	return &td
}
