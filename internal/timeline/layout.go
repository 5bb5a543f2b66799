package timeline

import (
	"math"
	"time"
)

// Phase is a stretch of one incarnation's life, as the charts colour it.
type Phase uint8

const (
	PhaseStarting Phase = iota // spawned, not ready yet (a oneshot/job: running)
	PhaseRunning               // ready
	PhaseStopping              // stop requested, not exited yet
)

// bar is one phase of one incarnation, in seconds after the chart's origin.
type bar struct {
	from, to float64
	phase    Phase
}

// row is one process in a chart.
type row struct {
	name     string
	critical bool
	bars     []bar
	kills    []float64 // SIGKILL instants
	exits    []float64 // exit instants
	readyAt  float64   // first ready (or completion), -1 if never
	spawnAt  float64   // first spawn, -1 if never
	deps     []Dep
	oom      bool // an incarnation was OOM-killed
}

// layout is what both charts draw: rows in config order on a common time
// axis from 0 to span seconds.
type layout struct {
	origin time.Time
	span   float64
	rows   []row
	index  map[string]int
}

// makeLayout places every incarnation of d on a time axis starting at the
// first spawn (or d.Start) and ending at the last event, or at d.Now while
// something still runs.
func makeLayout(d Doc) layout {
	origin := d.Start
	for _, p := range d.Processes {
		for _, in := range p.Incarnations {
			if in.Spawned != nil && in.Spawned.Before(origin) {
				origin = *in.Spawned
			}
		}
	}
	critical := map[string]bool{}
	for _, l := range d.CriticalChain {
		critical[l.Process] = true
	}
	l := layout{origin: origin, index: map[string]int{}}
	sec := func(t time.Time) float64 { return t.Sub(origin).Seconds() }
	end := 0.0
	now := sec(d.Now)
	for _, p := range d.Processes {
		r := row{name: p.Name, critical: critical[p.Name], readyAt: -1, spawnAt: -1, deps: p.DependsOn}
		for _, in := range p.Incarnations {
			if in.Spawned == nil {
				continue
			}
			s := sec(*in.Spawned)
			if r.spawnAt < 0 {
				r.spawnAt = s
			}
			stop := now
			if in.Exited != nil {
				stop = sec(*in.Exited)
				r.exits = append(r.exits, stop)
			}
			ready := stop
			if in.Ready != nil {
				ready = sec(*in.Ready)
				if r.readyAt < 0 {
					r.readyAt = ready
				}
			} else if in.Exited != nil && in.Success && p.Type != "service" && r.readyAt < 0 {
				r.readyAt = stop
			}
			stopReq := stop
			if in.StopRequested != nil {
				stopReq = math.Min(sec(*in.StopRequested), stop)
			}
			ready = math.Min(ready, stopReq)
			r.bars = append(r.bars, bar{s, ready, PhaseStarting})
			if stopReq > ready {
				r.bars = append(r.bars, bar{ready, stopReq, PhaseRunning})
			}
			if stop > stopReq {
				r.bars = append(r.bars, bar{stopReq, stop, PhaseStopping})
			}
			if in.KillSent != nil {
				r.kills = append(r.kills, sec(*in.KillSent))
			}
			if in.ExitReason == "OOMKilled" {
				r.oom = true
			}
			end = math.Max(end, stop)
		}
		l.index[p.Name] = len(l.rows)
		l.rows = append(l.rows, r)
	}
	if sd := d.Shutdown; sd != nil && sd.Ended != nil {
		end = math.Max(end, sec(*sd.Ended))
	}
	l.span = math.Max(end, 0.001)
	return l
}

// tickStep picks a round axis step (1, 2 or 5 times a power of ten) giving
// at most max ticks over span.
func tickStep(span float64, max int) float64 {
	raw := span / float64(max)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
