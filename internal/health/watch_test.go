package health

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// Pure hysteresis: outcome sequences in, state changes out.
func TestThresholds(t *testing.T) {
	tests := []struct {
		name        string
		succ, fail  int
		startReady  bool
		outcomes    string // 'T' success, 'F' failure
		wantChanges string // the state after each change, at the index it happened: "2:T 5:F"
		wantReached bool
	}{
		{"first success", 1, 3, false, "FFT", "2:T", true},
		{"needs two in a row", 2, 3, false, "TFTFTT", "5:T", true},
		{"failures before ready emit nothing", 1, 1, false, "FFFF", "", false},
		{"hysteresis", 1, 3, false, "TFFTFFF", "0:T 6:F", true},
		{"back to ready needs the success threshold", 2, 2, false, "TTFFTFTT", "1:T 3:F 7:T", true},
		{"flapping below the failure threshold", 1, 2, false, "TFTFTFTF", "0:T", true},
		{"flapping at threshold 1", 1, 1, false, "TFTF", "0:T 1:F 2:T 3:F", true},
		{"liveness: failures before any success count", 1, 3, true, "FFF", "2:F", false},
		{"liveness: healthy stays silent", 1, 3, true, "TTFFT", "", true},
		{"liveness: recovers", 2, 1, true, "FTT", "0:F 2:T", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newThresholds(Timing{SuccessThreshold: tt.succ, FailureThreshold: tt.fail, StartReady: tt.startReady})
			var changes []string
			for i, c := range tt.outcomes {
				if th.record(c == 'T') {
					changes = append(changes, fmt.Sprintf("%d:%s", i, map[bool]string{true: "T", false: "F"}[th.ready]))
				}
			}
			if got := strings.Join(changes, " "); got != tt.wantChanges {
				t.Errorf("changes %q, want %q", got, tt.wantChanges)
			}
			if th.reached != tt.wantReached {
				t.Errorf("reached %v, want %v", th.reached, tt.wantReached)
			}
		})
	}
}

func TestTimingFrom(t *testing.T) {
	got := TimingFrom(&config.Probe{InitialDelay: time.Second, Interval: 5 * time.Second, FailureThreshold: 7})
	want := Timing{
		InitialDelay:     time.Second,
		StartInterval:    config.DefaultStartInterval,
		Interval:         5 * time.Second,
		Timeout:          config.DefaultProbeTimeout,
		SuccessThreshold: config.DefaultSuccessThreshold,
		FailureThreshold: 7,
	}
	if got != want {
		t.Errorf("TimingFrom = %+v, want %+v", got, want)
	}
}

// scripted is a fake Checker: each attempt takes its scripted duration (or
// until ctx is done, whichever is first) and returns its scripted outcome;
// it records when attempts started and how many overlapped.
type scripted struct {
	outcomes string        // 'T', 'F'; repeats the last one when exhausted
	took     time.Duration // how long each attempt takes

	mu       sync.Mutex // guards the fields below
	starts   []time.Time
	inFlight int
	maxIn    int
}

func (s *scripted) Check(ctx context.Context) Result {
	s.mu.Lock()
	i := len(s.starts)
	s.starts = append(s.starts, time.Now())
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if s.took > 0 {
		select {
		case <-time.After(s.took):
		case <-ctx.Done():
			return Result{Detail: "timeout"}
		}
	}
	c := s.outcomes[min(i, len(s.outcomes)-1)]
	return Result{OK: c == 'T', Detail: fmt.Sprintf("attempt %d", i)}
}

// offsets returns the attempt start times relative to t0.
func (s *scripted) offsets(t0 time.Time) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d []time.Duration
	for _, st := range s.starts {
		d = append(d, st.Sub(t0))
	}
	return d
}

// recorder collects transitions as "offset:state(detail)".
type recorder struct {
	t0  time.Time
	mu  sync.Mutex // guards got
	got []string
}

func (r *recorder) emit(tr Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%s:%v(%s)", tr.At.Sub(r.t0), tr.Ready, tr.Detail))
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, " ")
}

// runWatch runs Watch in a synctest bubble for the given fake duration (not
// a multiple of the schedule, so that the end never ties with an attempt) and
// returns the checker's attempt offsets and the transitions.
func runWatch(t *testing.T, c *scripted, tm Timing, d time.Duration) (attempts []time.Duration, transitions string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		rec := &recorder{t0: t0}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Watch(ctx, c, tm, rec.emit, nil)
		}()
		time.Sleep(d)
		cancel()
		<-done // Watch returns once ctx is done; the bubble checks nothing leaked
		attempts, transitions = c.offsets(t0), rec.String()
	})
	return attempts, transitions
}

func TestWatchSchedule(t *testing.T) {
	tm := Timing{InitialDelay: 5 * time.Second, StartInterval: time.Second, Interval: 10 * time.Second,
		Timeout: time.Second, SuccessThreshold: 2, FailureThreshold: 3}
	attempts, trs := runWatch(t, &scripted{outcomes: "FTT"}, tm, 30*time.Second)
	// Not before InitialDelay; every StartInterval until ready (2 successes,
	// at 7s); then every Interval.
	if got, want := fmt.Sprint(attempts), "[5s 6s 7s 17s 27s]"; got != want {
		t.Errorf("attempts at %s, want %s", got, want)
	}
	if want := "7s:true(attempt 2)"; trs != want {
		t.Errorf("transitions %q, want %q", trs, want)
	}
}

func TestWatchNotReadyBeforeInitialDelay(t *testing.T) {
	tm := Timing{InitialDelay: 3 * time.Second, StartInterval: 100 * time.Millisecond, Interval: time.Second,
		Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 1}
	attempts, trs := runWatch(t, &scripted{outcomes: "T"}, tm, 2999*time.Millisecond)
	if len(attempts) != 0 || trs != "" {
		t.Errorf("attempts %v, transitions %q before the initial delay", attempts, trs)
	}
}

func TestWatchHysteresis(t *testing.T) {
	tm := Timing{StartInterval: time.Second, Interval: time.Second, Timeout: time.Second,
		SuccessThreshold: 2, FailureThreshold: 3}
	// Attempts at 0s, 1s, ...: ready at 1s; two failures are tolerated; three
	// in a row (5s-7s) make it not ready; two successes (8s, 9s) ready again.
	_, trs := runWatch(t, &scripted{outcomes: "TTFFTFFFTTT"}, tm, 10500*time.Millisecond)
	want := "1s:true(attempt 1) 7s:false(attempt 7) 9s:true(attempt 9)"
	if trs != want {
		t.Errorf("transitions %q, want %q", trs, want)
	}
}

func TestWatchFlapping(t *testing.T) {
	tm := Timing{StartInterval: time.Second, Interval: time.Second, Timeout: time.Second,
		SuccessThreshold: 1, FailureThreshold: 2}
	_, trs := runWatch(t, &scripted{outcomes: "TFTFTFTFTFTF"}, tm, 11500*time.Millisecond)
	if want := "0s:true(attempt 0)"; trs != want {
		t.Errorf("flapping below the failure threshold gave %q, want only %q", trs, want)
	}
}

// A slow checker never overlaps itself: the next attempt starts when the
// previous one has ended, even when it outlasts the interval.
func TestWatchOneAttemptInFlight(t *testing.T) {
	tm := Timing{StartInterval: time.Second, Interval: time.Second, Timeout: 3 * time.Second,
		SuccessThreshold: 1, FailureThreshold: 1}
	c := &scripted{outcomes: "T", took: 10 * time.Second} // always cut at the timeout
	attempts, trs := runWatch(t, c, tm, 10*time.Second)
	if got, want := fmt.Sprint(attempts), "[0s 3s 6s 9s]"; got != want {
		t.Errorf("attempts at %s, want %s", got, want)
	}
	if c.maxIn != 1 {
		t.Errorf("%d attempts in flight at once, want 1", c.maxIn)
	}
	if trs != "" {
		t.Errorf("timed-out attempts made it ready: %q", trs)
	}
}

// The period runs from attempt start to attempt start.
func TestWatchPeriodIncludesAttempt(t *testing.T) {
	tm := Timing{StartInterval: 2 * time.Second, Interval: 2 * time.Second, Timeout: time.Second,
		SuccessThreshold: 1, FailureThreshold: 1}
	attempts, _ := runWatch(t, &scripted{outcomes: "F", took: 500 * time.Millisecond}, tm, 7*time.Second)
	if got, want := fmt.Sprint(attempts), "[0s 2s 4s 6s]"; got != want {
		t.Errorf("attempts at %s, want %s", got, want)
	}
}

func TestWatchLiveness(t *testing.T) {
	tm := Timing{StartInterval: time.Second, Interval: 10 * time.Second, Timeout: time.Second,
		SuccessThreshold: 1, FailureThreshold: 3, StartReady: true}
	attempts, trs := runWatch(t, &scripted{outcomes: "FFFF"}, tm, 3500*time.Millisecond)
	if want := "2s:false(attempt 2)"; trs != want {
		t.Errorf("transitions %q, want %q", trs, want)
	}
	if got, want := fmt.Sprint(attempts), "[0s 1s 2s 3s]"; got != want {
		t.Errorf("attempts at %s, want %s (StartInterval until the first success)", got, want)
	}
}

// observe sees every completed attempt with its duration and outcome, and
// not one cut short by the end of the watch.
func TestWatchObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := Timing{StartInterval: time.Second, Interval: time.Second, Timeout: 5 * time.Second,
			SuccessThreshold: 1, FailureThreshold: 1}
		c := &scripted{outcomes: "FT", took: 200 * time.Millisecond}
		var got []string
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Watch(ctx, c, tm, func(Transition) {}, func(d time.Duration, ok bool) {
				got = append(got, fmt.Sprintf("%s:%v", d, ok))
			})
		}()
		time.Sleep(2100 * time.Millisecond) // third attempt in flight since 2s
		cancel()
		<-done
		if want := "200ms:false 200ms:true"; strings.Join(got, " ") != want {
			t.Errorf("observed %q, want %q", strings.Join(got, " "), want)
		}
	})
}
