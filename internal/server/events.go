package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// The event stream (GET /events on the HTTP listener, GET /v1/events on the
// control socket) is Server-Sent Events. Frames, each an `event:` name and
// one JSON `data:` line:
//
//	status     the whole Status (as GET /status, without resources): first on
//	           every connection, and again when a reload changed the set of
//	           processes or the config generation
//	process    {"change": [...], "was": STATE, "process": ProcessStatus}:
//	           one process changed; change lists state, ready, restart,
//	           exit, pid, detail
//	phase      {"phase", "ready", "generation"}: podvisor's phase or
//	           readiness changed
//	reload     {"generation"}: a reload was applied; a status frame follows
//	resources  {NAME: Resources}: only with ?resources=DURATION (at least
//	           1s), every DURATION
//	overflow   the client fell behind and is dropped; EventSource
//	           reconnects by itself and starts again from a status frame
//
// One goroutine (the watcher) turns published snapshots into frames and
// hands them to every stream without blocking: a stream whose buffer is
// full is dropped, so a slow client never slows the supervision loop or
// the other clients. The watcher runs only while at least one stream is
// open: with nobody listening nothing wakes up.

// EventSource is what the event stream needs from the supervisor.
type EventSource interface {
	Snapshot() supervisor.Snapshot
	// Changed returns a channel closed at the next publish.
	Changed() <-chan struct{}
}

const (
	// MaxStreams bounds the event streams open at once through one
	// handler. A stream holds a connection for as long as the client
	// wants, and LimitListener does not shed a served connection whose
	// writes make progress: the cap keeps the HTTP port's slots for other
	// clients. Each handler (the HTTP port's, the control socket's) has a
	// budget of its own, so anonymous clients of the port never lock the
	// operator out of the socket.
	MaxStreams = 16
	// streamBuffer is how many frames a stream may lag behind.
	streamBuffer = 64
	// eventGap spaces the watcher's batches: 200 processes restarting at
	// once make one batch per gap, not one per publish.
	eventGap = 100 * time.Millisecond
	// heartbeat keeps proxies (kubectl port-forward) from closing an idle
	// stream.
	heartbeat = 25 * time.Second
	// writeBudget is how long one frame may take to write before the
	// client counts as stuck.
	writeBudget      = 10 * time.Second
	minResourceEvery = time.Second
)

// Events fans snapshot changes out to event streams.
type Events struct {
	src     EventSource
	sampler Sampler
	gap     time.Duration
	beat    time.Duration // heartbeat period

	mu    sync.Mutex           // guards subs, quit and every budget's open
	subs  map[*stream]struct{} // open streams
	def   *budget              // ServeHTTP's
	quit  chan struct{}        // the running watcher's; nil when none runs
	wakes func()               // tests: called once per watcher wake-up
	// watchers counts running watcher goroutines (tests wait on it).
	watchers sync.WaitGroup
}

type stream struct {
	ch chan []byte // frames; closed by the watcher when the stream is dropped
	b  *budget     // the one it counts against
}

// budget is one handler's share of streams.
type budget struct {
	max  int
	open int // guarded by Events.mu
}

// streamHandler serves e's streams within a budget of their own.
type streamHandler struct {
	e *Events
	b *budget
}

func (h streamHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.e.serve(w, r, h.b) }

// NewEvents returns the event stream of src. sampler (nil: none) serves
// ?resources.
func NewEvents(src EventSource, sampler Sampler) *Events {
	return &Events{src: src, sampler: sampler, gap: eventGap, beat: heartbeat, subs: map[*stream]struct{}{}, def: &budget{max: MaxStreams}}
}

// Handler serves e's streams, at most max of them open at once, counted
// apart from those of every other handler (and of ServeHTTP's MaxStreams):
// give each listener its own.
func (e *Events) Handler(max int) http.Handler {
	return streamHandler{e: e, b: &budget{max: max}}
}

// Streams returns how many streams are open.
func (e *Events) Streams() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.subs)
}

// subscribe opens a stream; nil when b's streams are all open.
func (e *Events) subscribe(b *budget) *stream {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b.open >= b.max {
		return nil
	}
	s := &stream{ch: make(chan []byte, streamBuffer), b: b}
	b.open++
	e.subs[s] = struct{}{}
	if e.quit == nil {
		e.quit = make(chan struct{})
		// Taken here, not in the goroutine: the stream's first frame is
		// read after this, so no change can fall between the two.
		ch := e.src.Changed()
		prev := e.src.Snapshot()
		e.watchers.Add(1)
		go e.watch(e.quit, ch, prev)
	}
	return s
}

// unsubscribe closes a stream (once for each subscribe, also after the
// watcher dropped it); the last one stops the watcher.
func (e *Events) unsubscribe(s *stream) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s.b.open--
	delete(e.subs, s)
	e.stopIfIdle()
}

func (e *Events) stopIfIdle() {
	if len(e.subs) == 0 && e.quit != nil {
		close(e.quit)
		e.quit = nil
	}
}

// watch turns snapshots into frames until quit is closed.
func (e *Events) watch(quit chan struct{}, ch <-chan struct{}, prev supervisor.Snapshot) {
	defer e.watchers.Done()
	var timer *time.Timer
	for {
		select {
		case <-ch:
		case <-quit:
			return
		}
		if e.wakes != nil {
			e.wakes()
		}
		// Let a burst settle into one batch.
		if timer == nil {
			timer = time.NewTimer(e.gap)
		} else {
			timer.Reset(e.gap)
		}
		select {
		case <-timer.C:
		case <-quit:
			timer.Stop()
			return
		}
		ch = e.src.Changed() // before the snapshot: no publish falls in between
		snap := e.src.Snapshot()
		frames := Diff(prev, snap)
		prev = snap
		if len(frames) > 0 {
			e.broadcast(quit, bytes.Join(frames, nil))
		}
	}
}

// broadcast hands a batch to every stream without waiting: a stream whose
// buffer is full is dropped.
func (e *Events) broadcast(quit chan struct{}, batch []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.quit != quit {
		return // this watcher was stopped; a newer one may run
	}
	for s := range e.subs {
		select {
		case s.ch <- batch:
		default:
			close(s.ch)
			delete(e.subs, s)
		}
	}
	e.stopIfIdle()
}

// The frames' data are the API's types.
type (
	ProcessEvent = api.ProcessEvent
	PhaseEvent   = api.PhaseEvent
	ReloadEvent  = api.ReloadEvent
)

// Diff returns the frames that take a client from prev to next: a reload
// and a status frame when the generation changed, one status frame when the
// set of processes changed otherwise, else one
// process frame per changed process and a phase frame when the phase or
// readiness changed.
func Diff(prev, next supervisor.Snapshot) [][]byte {
	if prev.Generation != next.Generation {
		return [][]byte{frame("reload", ReloadEvent{Generation: next.Generation}), frame("status", NewStatus(next))}
	}
	if !sameNames(prev.Processes, next.Processes) {
		return [][]byte{frame("status", NewStatus(next))}
	}
	var out [][]byte
	st := NewStatus(next)
	for i, a := range prev.Processes {
		b := next.Processes[i]
		var change []string
		if a.State != b.State {
			change = append(change, "state")
		}
		if a.Ready != b.Ready {
			change = append(change, "ready")
		}
		if a.Restarts != b.Restarts {
			change = append(change, "restart")
		}
		if !a.ExitedAt.Equal(b.ExitedAt) {
			change = append(change, "exit")
		}
		if a.Pid != b.Pid {
			change = append(change, "pid")
		}
		if a.Reason != b.Reason || a.Status != b.Status || !slices.Equal(a.WaitingFor, b.WaitingFor) || a.OOMKills != b.OOMKills {
			change = append(change, "detail")
		}
		if change == nil {
			continue
		}
		ev := ProcessEvent{Change: change, Process: st.Processes[i]}
		if a.State != b.State {
			ev.Was = a.State
		}
		out = append(out, frame("process", ev))
	}
	if prev.Phase != next.Phase || isReady(prev) != isReady(next) {
		out = append(out, frame("phase", PhaseEvent{Phase: next.Phase, Ready: isReady(next), Generation: next.Generation}))
	}
	return out
}

func sameNames(a, b []supervisor.ProcessSnapshot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// frame encodes one SSE frame. The JSON has no raw newlines, so one data
// line carries it.
func frame(event string, v any) []byte {
	body, _ := json.Marshal(v) // plain types: cannot fail
	b := make([]byte, 0, len(event)+len(body)+16)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, body...)
	return append(b, "\n\n"...)
}

// ServeHTTP serves one event stream until the client goes away, falls
// behind, or the server shuts down; at most MaxStreams are open at once
// through it.
func (e *Events) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.serve(w, r, e.def) }

func (e *Events) serve(w http.ResponseWriter, r *http.Request, b *budget) {
	var every time.Duration
	if v := r.URL.Query().Get("resources"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < minResourceEvery {
			http.Error(w, fmt.Sprintf("bad resources %q: want a duration of at least %s", v, minResourceEvery), http.StatusBadRequest)
			return
		}
		every = d
	}
	if r.Method == http.MethodHead { // the headers say it all; nothing to stream
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		return
	}
	s := e.subscribe(b)
	if s == nil {
		http.Error(w, "too many event streams open here (at most "+strconv.Itoa(b.max)+")", http.StatusServiceUnavailable)
		return
	}
	defer e.unsubscribe(s)
	rc := http.NewResponseController(w)
	// A stream reads nothing after the request: no read deadline may end
	// it (the write budget below catches a stuck client).
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // a buffering proxy would hold frames back
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeBudget)) // not every writer has one
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// retry: how soon EventSource reconnects after a drop.
	if !send(append([]byte("retry: 1000\n\n"), frame("status", NewStatus(e.src.Snapshot()))...)) {
		return
	}
	beat := time.NewTicker(e.beat)
	defer beat.Stop()
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
		if !send(e.resourcesFrame()) {
			return
		}
	}
	for {
		var b []byte
		select {
		case batch, ok := <-s.ch:
			if !ok {
				send(frame("overflow", struct{}{}))
				return
			}
			b = batch
		case <-tick:
			b = e.resourcesFrame()
		case <-beat.C:
			b = []byte(": ping\n\n")
		case <-r.Context().Done():
			return
		}
		if !send(b) {
			return
		}
	}
}

// resourcesFrame samples the running processes' trees.
func (e *Events) resourcesFrame() []byte {
	out := map[string]Resources{}
	for name, u := range sample(e.sampler, e.src.Snapshot()) {
		out[name] = Resources{CPUSeconds: u.CPUSeconds, MemoryBytes: u.RSSBytes, OpenFDs: u.OpenFDs, Threads: u.Threads, Processes: u.Processes}
	}
	return frame("resources", out)
}
