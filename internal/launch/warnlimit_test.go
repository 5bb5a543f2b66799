package launch

import (
	"bytes"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
)

// fakeWarnClock is a warnClock whose time moves only by advance, which runs
// the timers that fall due.
type fakeWarnClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeWarnClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeWarnClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

func (c *fakeWarnClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// warnLines returns the WARN lines of a text log with msg.
func warnLines(buf *bytes.Buffer, msg string) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="`+msg+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// suppressedSum counts the warnings lines stand for: N for a summary with
// suppressed=N, 1 for a line in full.
func suppressedSum(t *testing.T, lines []string) int {
	t.Helper()
	re := regexp.MustCompile(`suppressed=(\d+)`)
	total := 0
	for _, l := range lines {
		n := 1
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		total += n
	}
	return total
}

// 3,000 refused datagrams give one line in full, then one summary per
// interval with the count, and what is still counted at close (issue 34
// item 15).
func TestWarnLimiterSummarises(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeWarnClock{now: time.Unix(1000, 0)}
	w := newWarnLimiter(slog.New(slog.NewTextHandler(&buf, nil)), clock, 10*time.Second)
	const msg = "notify message rejected"
	for i := range 3000 {
		w.Warn(msg, "process", "svc", "reason", "malformed message from pid "+strconv.Itoa(i))
	}
	if got := warnLines(&buf, msg); len(got) != 1 || strings.Contains(got[0], "suppressed") {
		t.Fatalf("after 3,000 warnings in an instant: %d lines, want the first one only:\n%s", len(got), buf.String())
	}
	clock.advance(9 * time.Second)
	if got := warnLines(&buf, msg); len(got) != 1 {
		t.Fatalf("a summary before the interval:\n%s", buf.String())
	}
	clock.advance(time.Second)
	got := warnLines(&buf, msg)
	if len(got) != 2 || !strings.Contains(got[1], "suppressed=2999") || !strings.Contains(got[1], "pid 2999") {
		t.Fatalf("after the interval: want a summary with suppressed=2999 and the latest reason:\n%s", buf.String())
	}
	// Quiet for a while: the next one is logged in full at once.
	clock.advance(time.Minute)
	w.Warn(msg, "process", "svc", "reason", "again")
	// Within the interval again: counted, and told at close.
	w.Warn(msg, "process", "svc", "reason", "and again")
	w.Warn("fd store full; fd closed", "process", "svc")
	w.Close()
	got = warnLines(&buf, msg)
	if len(got) != 4 || !strings.Contains(got[2], "reason=again") || !strings.Contains(got[3], "suppressed=1") {
		t.Fatalf("want the line after a quiet spell in full and the count at close:\n%s", buf.String())
	}
	if n := suppressedSum(t, got); n != 3002 {
		t.Errorf("lines and counts account for %d warnings, want 3002", n)
	}
	if len(warnLines(&buf, "fd store full; fd closed")) != 1 {
		t.Errorf("another message is throttled on its own:\n%s", buf.String())
	}
}

// Every fd past fd_store_max was its own warning line; through the
// incarnation's limiter they are one line and a count.
func TestFDStoreFullThrottled(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeWarnClock{now: time.Unix(1000, 0)}
	w := newWarnLimiter(slog.New(slog.NewTextHandler(&buf, nil)), clock, 10*time.Second)
	st := NewFDStore(slog.New(slog.DiscardHandler))
	defer st.Close()
	p := &config.Process{Name: "web", FDStoreMax: 1}
	for range 300 {
		r, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		wr.Close()
		st.handleOrClose(p, &health.StoreRequest{Name: "x", Files: []*os.File{r}}, w.Warn)
	}
	w.Close()
	got := warnLines(&buf, "fd store full; fd closed")
	if len(got) != 2 || suppressedSum(t, got) != 299 || st.Count("web") != 1 {
		t.Fatalf("300 fds with fd_store_max 1: want 1 stored, 2 lines accounting for 299 refusals:\n%s", buf.String())
	}
}
