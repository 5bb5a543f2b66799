package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/schema"
)

// Backend carries out commands; Supervised adapts the supervisor to it.
type Backend interface {
	// Command performs op and waits for its outcome until ctx is done;
	// then it answers with what is known (the command itself goes on: it
	// is never left half-done because a client went away).
	Command(ctx context.Context, op string, req Request) Response
	// Tail returns the output tail of a process, or an error naming the
	// unknown process (with a "did you mean").
	Tail(name string) (*logs.Tail, error)
}

// DefaultTimeout is how long a command waits for its outcome when the
// request does not say.
const DefaultTimeout = 60 * time.Second

// maxBody bounds a request body.
const maxBody = 64 << 10

type credKey struct{}

// Server serves the control protocol on a listener from Listen.
type Server struct {
	backend Backend
	log     *slog.Logger
	uid     int
	http    *http.Server
	mux     *http.ServeMux
	// Identity names this podvisor in every reply (headers Podvisor-Pid
	// and Podvisor-Config, and GET /v1/identity), so that a client never
	// mistakes another podvisor's answer for this one's.
	Identity Identity
	// closed is cancelled by Shutdown: log followers end at once, so they
	// do not hold the exit for Shutdown's whole deadline.
	closed       context.Context
	endFollowers context.CancelFunc
}

// Identity is which podvisor answers on a socket.
type Identity = api.Identity

// NewServer returns a server for backend.
func NewServer(backend Backend, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	s := &Server{backend: backend, log: log, uid: os.Geteuid(), mux: mux}
	s.closed, s.endFollowers = context.WithCancel(context.Background())
	for _, op := range Ops {
		mux.HandleFunc("POST /v1/"+op, func(w http.ResponseWriter, r *http.Request) { s.command(w, r, op) })
	}
	mux.HandleFunc("GET /v1/logs", s.logs)
	mux.HandleFunc("POST /v1/logs/reopen", s.reopenLogs)
	mux.HandleFunc("GET /v1/attach", s.attach)
	mux.HandleFunc("GET /openapi.json", schema.ServeOpenAPI)
	mux.HandleFunc("GET /v1/identity", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.Identity) })
	s.http = &http.Server{
		Handler:           s.authorize(mux),
		ReadHeaderTimeout: 5 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if uc, ok := c.(*net.UnixConn); ok {
				if cred, err := peerCred(uc); err == nil {
					return context.WithValue(ctx, credKey{}, cred.Uid)
				}
			}
			return ctx
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return s
}

// Handle adds a route (GET /v1/events, the event stream) before Serve;
// it is served to the same peers as the commands.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Serve accepts connections until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting and closes the listener (removing the socket
// file); followers of logs are ended at once, commands still waiting for
// their outcome are cut off at ctx's end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.endFollowers()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return s.http.Close()
	}
	return err
}

// authorize serves only root and podvisor's own uid, by the kernel's word
// (SO_PEERCRED), not the socket file's mode.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderPid, strconv.Itoa(s.Identity.Pid))
		w.Header().Set(HeaderConfig, s.Identity.Config)
		uid, ok := r.Context().Value(credKey{}).(uint32)
		if !ok || (uid != 0 && int(uid) != s.uid) {
			who := "unknown peer"
			if ok {
				who = "uid " + strconv.Itoa(int(uid))
			}
			s.log.Warn("control request refused", "peer", who, "path", r.URL.Path)
			writeJSON(w, http.StatusForbidden, Response{Error: fmt.Sprintf("permission denied: %s is neither root nor podvisor's uid %d", who, s.uid)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) command(w http.ResponseWriter, r *http.Request, op string) {
	timeout := DefaultTimeout
	if t := r.URL.Query().Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			writeJSON(w, http.StatusBadRequest, Response{Error: fmt.Sprintf("bad timeout %q: want a positive duration such as 30s", t)})
			return
		}
		timeout = d
	}
	var req Request
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeJSON(w, http.StatusBadRequest, Response{Error: "bad request body: " + err.Error()})
		return
	}
	if msg := Validate(op, req); msg != "" {
		writeJSON(w, http.StatusBadRequest, Response{Error: msg})
		return
	}
	// The request's context ends when the client disconnects: the waiting
	// stops, the command does not.
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	s.log.Info("control command", "op", op, "names", strings.Join(req.Names, " "), "signal", req.Signal, "dry_run", req.DryRun)
	writeJSON(w, http.StatusOK, s.backend.Command(ctx, op, req))
}

// Validate checks a request's shape for op; "" when it is well formed.
func Validate(op string, req Request) string {
	switch op {
	case "reload":
		if len(req.Names) > 0 && req.DryRun {
			return "reload --dry-run takes no process names (it plans a config reload)"
		}
	case "signal":
		if len(req.Names) != 1 || req.Signal == "" {
			return "signal takes one process name and a signal"
		}
	default:
		if len(req.Names) == 0 {
			return op + " needs at least one process name"
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
