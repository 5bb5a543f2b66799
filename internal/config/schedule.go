package config

import (
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"
)

var (
	scheduleKeys     = []string{"cron", "timezone", "every", "jitter", "concurrency"}
	concurrencyWords = []string{"forbid", "replace", "allow"}
)

// Concurrency says what a schedule's tick does while the last run still runs.
type Concurrency uint8

const (
	Forbid  Concurrency = iota // skip the tick (counted)
	Replace                    // stop the run, start a new one
)

// Schedule is `schedule:` on a oneshot: it runs at each tick, not at the
// start-up.
type Schedule struct {
	Cron        string         // as written ("" with Every)
	Every       time.Duration  // 0 with Cron
	Location    *time.Location // for Cron
	Jitter      time.Duration
	Concurrency Concurrency

	sched cron.Schedule
}

// scheduleRef is the instant a cron expression is tried from at load:
// fixed, so Parse stays a function of its input. An expression with no
// time in the 5 years after it (robfig/cron's horizon) never fires.
var scheduleRef = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Next is the first tick after t (before jitter).
func (s *Schedule) Next(t time.Time) time.Time {
	if s.Every > 0 {
		return t.Add(s.Every)
	}
	return s.sched.Next(t.In(s.Location))
}

func (l *loader) schedule(n *yaml.Node, path *keyPath, p *Process) *Schedule {
	f, ok := l.fields(n, path, scheduleKeys)
	if !ok {
		return nil
	}
	s := &Schedule{Location: time.Local}
	good := true
	cronV, hasCron := f.get("cron")
	everyV, hasEvery := f.get("every")
	switch {
	case hasCron == hasEvery:
		l.errorf(n, path, "give cron or every, exactly one").Hint = `cron: "*/5 * * * *" or every: 5m`
		good = false
	case hasCron:
		expr, ok := l.str(cronV.val, path.field("cron"))
		if !ok {
			return nil
		}
		sched, err := cron.ParseStandard(expr)
		if err != nil {
			l.errorf(cronV.val, path.field("cron"), "invalid cron expression %q: %v", expr, err).Hint =
				"five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @every 10m"
			return nil
		}
		if sched.Next(scheduleRef).IsZero() {
			l.errorf(cronV.val, path.field("cron"), "cron expression %q never fires", expr).Hint = "no such date in any year (say, February 30)"
			return nil
		}
		s.Cron, s.sched = expr, sched
	case hasEvery:
		s.Every, good = l.duration(everyV.val, path.field("every"), true)
	}
	if v, ok := f.get("timezone"); ok {
		if name, ok := l.str(v.val, path.field("timezone")); ok {
			loc, err := time.LoadLocation(name)
			switch {
			case err != nil:
				l.errorf(v.val, path.field("timezone"), "unknown time zone %q", name).Hint = "an IANA name such as Europe/Paris or UTC"
				good = false
			case !hasCron:
				l.errorf(v.val, path.field("timezone"), "timezone applies to cron only")
				good = false
			default:
				s.Location = loc
			}
		}
	}
	if v, ok := f.get("jitter"); ok {
		s.Jitter, _ = l.duration(v.val, path.field("jitter"), false)
		if s.Every > 0 && s.Jitter >= s.Every {
			l.errorf(v.val, path.field("jitter"), "jitter %s is not less than every %s", formatDuration(s.Jitter), formatDuration(s.Every))
			good = false
		}
	}
	if v, ok := f.get("concurrency"); ok {
		if w, ok := l.word(v.val, path.field("concurrency"), "concurrency", concurrencyWords); ok {
			if w == "allow" {
				l.errorf(v.val, path.field("concurrency"), "concurrency allow is not supported: a process runs one instance at a time").Hint =
					"forbid skips a tick while a run is still going; replace stops it and starts anew"
				good = false
			}
			s.Concurrency = Concurrency(slices.Index(concurrencyWords, w))
		}
	}
	if p.Type != Oneshot {
		l.errorf(n, path, "schedule is for a oneshot, not a %s", p.Type).Hint = "add type: oneshot"
		good = false
	}
	if !good {
		return nil
	}
	return s
}
