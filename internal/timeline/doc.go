package timeline

import (
	"sort"
	"time"
)

// Doc is the /timeline document. Instants are RFC 3339 with nanoseconds;
// the chain and report give seconds, relative to Start where they are
// instants ("_at") and plain durations otherwise.
type Doc struct {
	Start         time.Time `json:"start"` // podvisor's start: the chart's origin
	Now           time.Time `json:"now"`   // when the document was made
	Processes     []Process `json:"processes"`
	CriticalChain []Link    `json:"critical_chain"`
	Shutdown      *Shutdown `json:"shutdown"` // null until a teardown began
}

// Process is one configured process and its last incarnations, oldest first.
type Process struct {
	Name         string        `json:"name"`
	Type         string        `json:"type"`
	DependsOn    []Dep         `json:"depends_on"`
	Scheduled    bool          `json:"scheduled,omitempty"` // runs at its schedule's ticks, not in the start-up
	Incarnations []Incarnation `json:"incarnations"`
	Dropped      int           `json:"dropped"` // older incarnations no longer kept
}

// Incarnation is one run of a process; an instant is null until it happened.
type Incarnation struct {
	Generation       uint64     `json:"generation"`
	Pid              int        `json:"pid"`
	Spawned          *time.Time `json:"spawned"`
	Started          *time.Time `json:"started"`
	Ready            *time.Time `json:"ready"`
	StopRequested    *time.Time `json:"stop_requested"`
	StopReason       string     `json:"stop_reason"`
	StopCommandBegan *time.Time `json:"stop_command_began"`
	StopCommandEnded *time.Time `json:"stop_command_ended"`
	StopCommandError string     `json:"stop_command_error"`
	SignalSent       *time.Time `json:"signal_sent"`
	Signal           string     `json:"signal"`
	KillSent         *time.Time `json:"sigkill_sent"`
	Exited           *time.Time `json:"exited"`
	ExitCode         *int       `json:"exit_code"`
	Success          bool       `json:"success"`     // the exit code is a success code
	ExitReason       string     `json:"exit_reason"` // "OOMKilled" when the kernel's OOM killer ended it
}

// Link is one step of the critical chain, from the first process to the one
// that became ready last.
type Link struct {
	Process     string  `json:"process"`
	SpawnedAt   float64 `json:"spawned_at"`    // seconds after Start
	ReadyAt     float64 `json:"ready_at"`      // seconds after Start: ready, or completed for a oneshot/job
	TimeToReady float64 `json:"time_to_ready"` // ReadyAt - SpawnedAt
	// Gates is the condition the next link waited for on this one
	// ("started", "ready", "completed"); "" on the last link.
	Gates string `json:"gates"`
}

// Shutdown is the teardown report.
type Shutdown struct {
	Cause         string     `json:"cause"`
	Process       string     `json:"process"` // the process whose failure began the teardown, if one did
	Began         time.Time  `json:"began"`
	Ended         *time.Time `json:"ended"`          // null while processes are still stopping
	BudgetSeconds float64    `json:"budget_seconds"` // shutdown_timeout
	UsedSeconds   float64    `json:"used_seconds"`   // until Ended, or until now
	LeftSeconds   float64    `json:"left_seconds"`   // of the budget, never below 0
	Processes     []Stop     `json:"processes"`      // in the order they exited
}

// Stop says how one process's stop went in the teardown.
type Stop struct {
	Process string `json:"process"`
	// RequestedAt and ExitedAt are seconds after the teardown began; ExitedAt
	// is null while it runs.
	RequestedAt *float64 `json:"requested_at"`
	ExitedAt    *float64 `json:"exited_at"`
	StopSeconds *float64 `json:"stop_seconds"` // from stop request to exit
	// EndedBy: "stop.command" (it exited before the stop signal was sent),
	// "signal" (after the stop signal), "SIGKILL", "exited" (on its own,
	// before podvisor asked), "spawn failed" (it never ran), or "running".
	EndedBy   string `json:"ended_by"`
	Signal    string `json:"signal"` // the stop signal sent, if any
	SIGKILLed bool   `json:"sigkilled"`
	ExitCode  *int   `json:"exit_code"`
	// Cause: this is the process whose failure began the teardown (it
	// may have exited just before the teardown began).
	Cause bool `json:"cause"`
}

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
