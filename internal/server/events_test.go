package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// changingSource is an EventSource whose publishes tests trigger.
type changingSource struct {
	fakeSource
	mu      sync.Mutex
	ch      chan struct{}
	waiters atomic.Int32 // calls to Changed
}

func newChangingSource(s supervisor.Snapshot) *changingSource {
	c := &changingSource{}
	c.set(s)
	return c
}

func (c *changingSource) Changed() <-chan struct{} {
	c.waiters.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changingSource) publish(s supervisor.Snapshot) {
	c.set(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

type sseFrame struct {
	event string
	data  string
}

// readFrame reads the next frame with an event name (comments and retry
// lines are skipped).
func readFrame(t *testing.T, r *bufio.Reader) sseFrame {
	t.Helper()
	var f sseFrame
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			f.event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			f.data = line[len("data: "):]
		case line == "" && f.event != "":
			return f
		}
	}
}

func TestDiff(t *testing.T) {
	base := fourStates()
	restarted := fourStates()
	restarted.Processes = append([]supervisor.ProcessSnapshot(nil), base.Processes...)
	db := &restarted.Processes[2]
	db.Pid, db.Restarts, db.ExitedAt, db.State, db.Ready = 4243, 1, t1, "starting", false

	if got := Diff(base, base); len(got) != 0 {
		t.Errorf("no change: %d frames", len(got))
	}
	got := Diff(base, restarted)
	if len(got) != 1 || !strings.HasPrefix(string(got[0]), "event: process\n") {
		t.Fatalf("restart: %q", got)
	}
	var ev ProcessEvent
	if err := json.Unmarshal([]byte(strings.TrimSpace(strings.SplitN(string(got[0]), "data: ", 2)[1])), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Process.Name != "db" || ev.Was != "running" || strings.Join(ev.Change, ",") != "state,ready,restart,exit,pid" {
		t.Errorf("restart event %+v", ev)
	}

	reloaded := fourStates()
	reloaded.Generation = 2
	if got := Diff(base, reloaded); len(got) != 2 || string(got[0]) != "event: reload\ndata: {\"generation\":2}\n\n" || !strings.HasPrefix(string(got[1]), "event: status\n") {
		t.Errorf("reload: %q", got)
	}
	stopping := fourStates()
	stopping.Phase = "stopping"
	if got := Diff(base, stopping); len(got) != 1 || !strings.HasPrefix(string(got[0]), "event: phase\n") {
		t.Errorf("phase: %q", got)
	}
}

func TestEventsStreamsChanges(t *testing.T) {
	src := newChangingSource(fourStates())
	ev := NewEvents(src, nil)
	ev.gap = time.Millisecond
	srv := httptest.NewServer(New(src, NewMetrics(), Options{Events: ev}))
	defer srv.Close()

	res, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := bufio.NewReader(res.Body)
	f := readFrame(t, r)
	var st Status
	if f.event != "status" || json.Unmarshal([]byte(f.data), &st) != nil || len(st.Processes) != 4 {
		t.Fatalf("first frame %+v", f)
	}
	next := fourStates()
	next.Processes[1].Restarts = 4
	next.Processes[1].State = "starting"
	src.publish(next)
	f = readFrame(t, r)
	var pe ProcessEvent
	if f.event != "process" || json.Unmarshal([]byte(f.data), &pe) != nil || pe.Process.Name != "cache" || pe.Process.Restarts != 4 {
		t.Fatalf("after a restart: %+v", f)
	}
}

func TestEventsDropSlowStreamAndIdleWatcher(t *testing.T) {
	src := newChangingSource(fourStates())
	ev := NewEvents(src, nil)
	ev.gap = 0
	var wakes atomic.Int32
	ev.wakes = func() { wakes.Add(1) }

	slow := ev.subscribe(ev.def) // never read
	fast := ev.subscribe(ev.def)
	for i := 0; i < streamBuffer+1; i++ {
		s := fourStates()
		s.Processes[0].Restarts = i + 1
		src.publish(s)
		// Wait until the watcher took the batch, reading fast's frame
		// (a fast client): the publisher never waits for slow.
		select {
		case <-fast.ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("publish %d: no frame on the fast stream", i)
		}
	}
	// The watcher may hand fast its last frame before it finds slow's
	// buffer full: wait for the drop with a deadline, without reading
	// slow (reading would make room and undo its falling behind).
	deadline := time.Now().Add(10 * time.Second)
	for ev.Streams() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("a stream that fell behind was not dropped (%d streams open, want 1)", ev.Streams())
		}
		time.Sleep(time.Millisecond) // the poll period, not a synchronisation
	}
	if c := drain(slow.ch); c == slow.ch {
		t.Fatal("the dropped stream's channel is not closed")
	}
	ev.unsubscribe(fast)
	ev.watchers.Wait() // the last stream gone, the watcher returns
	before, taken := wakes.Load(), src.waiters.Load()
	for i := 0; i < 10; i++ {
		src.publish(fourStates())
	}
	if wakes.Load() != before || src.waiters.Load() != taken {
		t.Errorf("with nobody listening: %d wake-ups, %d Changed calls", wakes.Load()-before, src.waiters.Load()-taken)
	}
}

// drain returns ch after reading what is buffered, so the next receive
// tells whether it is closed.
func drain(ch chan []byte) chan []byte {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				closed := make(chan []byte)
				close(closed)
				return closed
			}
		default:
			return ch
		}
	}
}

func TestEventsLimitAndBadResources(t *testing.T) {
	src := newChangingSource(fourStates())
	ev := NewEvents(src, nil)
	h := New(src, NewMetrics(), Options{Events: ev})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest("HEAD", "/events", nil)) // returns at once
	if rec.Code != http.StatusOK || ev.Streams() != 0 {
		t.Errorf("HEAD /events: %d, %d streams", rec.Code, ev.Streams())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest("GET", "/events?resources=10ms", nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("resources=10ms: %d", rec.Code)
	}
	for i := 0; i < MaxStreams; i++ {
		defer ev.unsubscribe(ev.subscribe(ev.def))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest("GET", "/events", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("stream %d: %d", MaxStreams+1, rec.Code)
	}
}

// Issue 34 item 7: each handler has its own budget. With ServeHTTP's
// MaxStreams all taken, a handler of its own still opens a stream, up to
// its own max; a stream the watcher drops for lagging gives its place back
// once.
func TestEventsBudgetsAreSeparate(t *testing.T) {
	src := newChangingSource(fourStates())
	ev := NewEvents(src, nil)
	for range MaxStreams {
		defer ev.unsubscribe(ev.subscribe(ev.def))
	}
	if ev.subscribe(ev.def) != nil {
		t.Fatal("the default budget let in one more than MaxStreams")
	}
	own := ev.Handler(1).(streamHandler)
	s := ev.subscribe(own.b)
	if s == nil {
		t.Fatal("a handler of its own was refused because another's streams were all open")
	}
	if ev.subscribe(own.b) != nil {
		t.Fatal("a budget of 1 let in 2")
	}
	// Dropped by the watcher (as broadcast does), then unsubscribed by
	// its handler: one place back, not two.
	ev.mu.Lock()
	delete(ev.subs, s)
	ev.mu.Unlock()
	ev.unsubscribe(s)
	if own.b.open != 0 {
		t.Fatalf("%d open after the only stream ended", own.b.open)
	}
	defer ev.unsubscribe(ev.subscribe(own.b))
	if ev.subscribe(own.b) != nil {
		t.Fatal("a dropped stream freed two places")
	}
}

// TestEventsOutliveServerTimeouts: a stream stays open past the server's
// ReadTimeout and WriteTimeout, which would otherwise end it.
func TestEventsOutliveServerTimeouts(t *testing.T) {
	src := newChangingSource(fourStates())
	ev := NewEvents(src, nil)
	ev.beat = 20 * time.Millisecond
	opts := Options{Events: ev, ReadTimeout: 50 * time.Millisecond, WriteTimeout: 50 * time.Millisecond}
	srv := httptest.NewUnstartedServer(New(src, NewMetrics(), opts))
	srv.Config = NewHTTPServer(srv.Config.Handler, opts)
	srv.Start()
	defer srv.Close()
	res, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	readFrame(t, r) // status
	began := time.Now()
	for beats := 0; time.Since(began) < 4*opts.ReadTimeout; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended after %v and %d heartbeats: %v", time.Since(began), beats, err)
		}
		if line == ": ping\n" {
			beats++
		}
	}
}
