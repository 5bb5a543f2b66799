package launch

import (
	"log/slog"
	"sync"
	"time"
)

// warnInterval is how often a throttled warning is logged at most, per
// message and incarnation.
const warnInterval = 10 * time.Second

// warnClock is the clock of a warnLimiter: real time in a run, a fake one in
// unit tests.
type warnClock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// warnLimiter throttles the warnings a process can cause at will (refused
// sd_notify datagrams, fds past fd_store_max): without it, a process that
// sends 3,000 bad datagrams writes 3,000 lines into podvisor's log. The
// first warning of each message is logged in full; later ones within
// interval are counted and summed up in one line (the last one's details
// and suppressed=N) once interval has passed since the previous line, and
// at close. One limiter serves one incarnation of one process; its state is
// guarded by mu (the notify reader and the summary timer both reach it).
type warnLimiter struct {
	log      *slog.Logger
	clock    warnClock
	interval time.Duration

	mu     sync.Mutex
	byMsg  map[string]*warnState
	closed bool
}

type warnState struct {
	last       time.Time // when the previous line was logged
	suppressed int       // warnings since then, not logged
	args       []any     // the latest suppressed warning's attributes
	stop       func() bool
}

func newWarnLimiter(log *slog.Logger, clock warnClock, interval time.Duration) *warnLimiter {
	return &warnLimiter{log: log, clock: clock, interval: interval, byMsg: map[string]*warnState{}}
}

// Warn logs msg with args, or counts it when a line for msg was logged less
// than interval ago.
func (w *warnLimiter) Warn(msg string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	s := w.byMsg[msg]
	if s == nil || w.closed || (s.suppressed == 0 && now.Sub(s.last) >= w.interval) {
		if s == nil {
			s = &warnState{}
			w.byMsg[msg] = s
		}
		s.last = now
		w.log.Warn(msg, args...)
		return
	}
	s.suppressed++
	s.args = args
	if s.stop == nil {
		s.stop = w.clock.AfterFunc(s.last.Add(w.interval).Sub(now), func() { w.summary(msg) })
	}
}

// summary logs the count of msg's suppressed warnings, if any.
func (w *warnLimiter) summary(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked(msg, w.byMsg[msg])
}

func (w *warnLimiter) flushLocked(msg string, s *warnState) {
	if s == nil {
		return
	}
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
	if s.suppressed == 0 {
		return
	}
	args := append(append([]any(nil), s.args...), "suppressed", s.suppressed)
	w.log.Warn(msg, args...)
	s.last, s.suppressed, s.args = w.clock.Now(), 0, nil
}

// Close logs what is still counted: the incarnation is over. Later warnings
// are logged in full.
func (w *warnLimiter) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for msg, s := range w.byMsg {
		w.flushLocked(msg, s)
	}
	w.closed = true
}
