package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/supervisor"
	"github.com/podvisor/podvisor/schema"
)

// Source is what the HTTP layer needs from the supervisor.
type Source interface {
	// Snapshot returns the latest published state. It must be cheap and must
	// not wait for the supervision loop: /readyz is polled often.
	Snapshot() supervisor.Snapshot
	// Ping returns nil once the supervision loop has answered a request. It
	// must return promptly once ctx is done.
	Ping(ctx context.Context) error
}

// Options configures the handler and the http.Server. Zero values mean the
// defaults below.
type Options struct {
	// Logger receives the server's own errors (accept failures, bad
	// requests, scrape errors). Nil discards them.
	Logger *slog.Logger
	// LiveTimeout bounds how long /livez waits for Ping (default 1s).
	LiveTimeout time.Duration
	// Timeline serves GET /timeline; nil leaves the route out.
	Timeline TimelineSource
	// Events serves GET /events (Server-Sent Events); nil leaves it out.
	Events *Events
	// UI serves the web page at / and everything under /ui/; nil leaves
	// them out.
	UI http.Handler
	// Hosts are the names served besides IP literals and localhost (the
	// Host header, against DNS rebinding); nil: none.
	Hosts *Hosts
	// StoredFDs, if set, counts the fds a process keeps in podvisor's fd
	// store (FDSTORE=1), for /status's stored_fds.
	StoredFDs func(process string) int
	// Pod, if set, tracks the pod whose containers the processes are
	// (kube play): /status then carries the pod's phase and conditions.
	// Its Run must be running for /status to answer.
	Pod *PodTracker
	// NotEnforced, if set, says which of a process's resources are not
	// enforced, for /status's resources_not_enforced.
	NotEnforced func(process string) string

	// Connection timeouts for NewHTTPServer. Go's zero values mean "none",
	// which lets a slow client hold a connection forever.
	ReadHeaderTimeout time.Duration // default 5s
	ReadTimeout       time.Duration // default 10s
	WriteTimeout      time.Duration // default 30s
	IdleTimeout       time.Duration // default 60s
}

const (
	defaultLiveTimeout       = time.Second
	defaultReadHeaderTimeout = 5 * time.Second
	defaultReadTimeout       = 10 * time.Second
	defaultWriteTimeout      = 30 * time.Second
	defaultIdleTimeout       = 60 * time.Second

	// maxHeaderBytes caps the request line plus headers; no legitimate
	// client of these routes sends more than a few hundred bytes.
	maxHeaderBytes = 8 << 10
	// maxBodyBytes caps request bodies: no route reads one, and the server
	// would otherwise drain up to 256 KiB of an unread body per request.
	maxBodyBytes = 1 << 10
)

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// New returns the handler for src's routes, with metrics from m (which must
// not be nil). Only GET and HEAD are served; other methods get 405 with an
// Allow header, unknown paths 404.
func New(src Source, m *Metrics, opts Options) http.Handler {
	h := makeHandler(src, m, opts)
	// A "GET" pattern also matches HEAD, and the mux answers other methods
	// on a known path with 405 and the Allow header by itself.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", h.readyz)
	mux.HandleFunc("GET /livez", h.livez)
	mux.HandleFunc("GET /status", h.status)
	mux.Handle("GET /metrics", m.handler(src.Snapshot, opts.logger()))
	mux.HandleFunc("GET /openapi.json", schema.ServeOpenAPI)
	if opts.Timeline != nil {
		mux.HandleFunc("GET /timeline", TimelineHandler(opts.Timeline))
	}
	if opts.Events != nil {
		mux.Handle("GET /events", opts.Events)
	}
	if opts.UI != nil {
		mux.Handle("/{$}", opts.UI)
		mux.Handle("/ui/", opts.UI)
	}
	if pprofBuilt {
		mountPprof(mux)
	}
	return guard(checkHost(opts.Hosts, mux))
}

// guard applies what holds for every route: bounded bodies and responses
// that are never cached or content-sniffed.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("X-Content-Type-Options", "nosniff")
		if r.ContentLength > maxBodyBytes {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

type handler struct {
	src         Source
	liveTimeout time.Duration
	sampler     Sampler
	storedFDs   func(string) int
	pod         *PodTracker
	notEnforced func(string) string
}

func makeHandler(src Source, m *Metrics, opts Options) *handler {
	return &handler{src: src, liveTimeout: orDefault(opts.LiveTimeout, defaultLiveTimeout), sampler: m.sampler, storedFDs: opts.StoredFDs, pod: opts.Pod, notEnforced: opts.NotEnforced}
}

// StatusHandler serves the /status document elsewhere: on the control
// socket as GET /v1/status (podvisor status --pod, kube ps).
func StatusHandler(src Source, m *Metrics, opts Options) http.HandlerFunc {
	return makeHandler(src, m, opts).status
}

// isReady is the single definition of "ready" for /readyz, /status and
// podvisor_ready: a teardown is never ready, whatever the snapshot says.
func isReady(s supervisor.Snapshot) bool {
	return s.Ready && s.Phase != phaseStopping
}

const phaseStopping = "stopping"

func (h *handler) readyz(w http.ResponseWriter, _ *http.Request) {
	snap := h.src.Snapshot()
	if isReady(snap) {
		writeText(w, http.StatusOK, "ok\n")
		return
	}
	var b strings.Builder
	if snap.Phase == phaseStopping {
		b.WriteString("stopping\n")
	}
	for _, name := range snap.NotReady {
		b.WriteString(name)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		b.WriteString("not ready\n")
	}
	writeText(w, http.StatusServiceUnavailable, b.String())
}

func (h *handler) livez(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.liveTimeout)
	defer cancel()
	// Ping runs on its own goroutine so that even a Ping that ignores ctx
	// yields a 503 in time: answering is the whole point of /livez. The
	// buffered channel lets that goroutine finish whenever Ping returns.
	done := make(chan error, 1)
	go func() { done <- h.src.Ping(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		writeText(w, http.StatusServiceUnavailable, "supervision loop not responding: "+err.Error()+"\n")
		return
	}
	writeText(w, http.StatusOK, "ok\n")
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	var snap supervisor.Snapshot
	var pod *PodStatus
	if h.pod == nil {
		snap = h.src.Snapshot()
	} else {
		// The snapshot the pod's conditions were observed from, so the
		// processes and the conditions agree.
		cur, err := h.pod.current(r.Context())
		if err != nil {
			writeText(w, http.StatusServiceUnavailable, "pod status: "+err.Error()+"\n")
			return
		}
		snap, pod = cur.snap, cur.pod
	}
	st := NewStatus(snap)
	addResources(&st, sample(h.sampler, snap))
	for i := range st.Processes {
		p := &st.Processes[i]
		if h.storedFDs != nil {
			p.StoredFDs = h.storedFDs(p.Name)
		}
		if h.notEnforced != nil {
			p.ResourcesNotEnforced = h.notEnforced(p.Name)
		}
	}
	st.Pod = pod
	// Marshalling cannot fail for these plain types.
	body, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}
