// Package webui serves podvisor's web page: the process table live over
// /events, the dependency graph and the timeline (from /timeline), the
// shutdown report after a stop, and, only when configured, the processes'
// output and actions.
//
// The page is static: an HTML file, a script and a style sheet embedded in
// the binary (about 20 KiB), no build step, no external fonts or scripts,
// so it works offline and under kubectl port-forward. It reads only what
// the read-only routes already give. Actions (POST /ui/api/OP) are refused
// unless ui.actions is set with a token_file, and then need the token as
// "Authorization: Bearer TOKEN" (a header, not a cookie: another site's
// page cannot make the browser send it). Output (GET /ui/api/logs) is
// served only with ui.logs: true, since it may hold secrets.
package webui

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/timeline"
)

//go:embed assets
var assets embed.FS

// Options configures the page.
type Options struct {
	// Backend carries out actions and serves output tails; the supervisor
	// is one. Needed for actions and logs.
	Backend control.Backend
	// Token enables actions: a request must present it. Empty: every
	// action is refused.
	Token []byte
	// Logs serves the processes' output tails.
	Logs bool
	// Timeline renders /ui/timeline.svg; nil: 404.
	Timeline interface {
		Doc(now time.Time) timeline.Doc
	}
	// Status is the state the page is served with (page.go); nil: the
	// page waits for the event stream.
	Status func() server.Status
	// Logger records refused actions (never the token).
	Logger *slog.Logger
}

// ActionTimeout bounds how long an action waits for its outcome.
const ActionTimeout = 30 * time.Second

type handler struct {
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
}

// New returns the handler for / and /ui/.
func New(o Options) http.Handler {
	h := &handler{opts: o, log: o.Logger, mux: http.NewServeMux()}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", files))
	h.mux.HandleFunc("GET /ui/api/config", h.config)
	h.mux.HandleFunc("GET /ui/api/logs", h.logs)
	h.mux.HandleFunc("GET /ui/timeline.svg", h.timelineSVG)
	h.mux.HandleFunc("POST /ui/api/{op}", h.action)
	return h.mux
}

// securityHeaders keep the page from loading anything but its own files
// and from being framed by another site.
func securityHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// Config is what the page is allowed to offer.
type Config struct {
	Actions bool `json:"actions"`
	Logs    bool `json:"logs"`
}

func (h *handler) config(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Config{Actions: len(h.opts.Token) > 0 && h.opts.Backend != nil, Logs: h.opts.Logs && h.opts.Backend != nil})
}

func (h *handler) timelineSVG(w http.ResponseWriter, _ *http.Request) {
	if h.opts.Timeline == nil {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_ = timeline.WriteSVG(w, h.opts.Timeline.Doc(time.Now()))
}

func (h *handler) logs(w http.ResponseWriter, r *http.Request) {
	if !h.opts.Logs || h.opts.Backend == nil {
		writeJSON(w, http.StatusForbidden, control.Response{Error: "output is not shown here: set ui.logs: true in the config to allow it"})
		return
	}
	n := 200
	if t := r.URL.Query().Get("tail"); t != "" {
		v, err := strconv.Atoi(t)
		if err != nil || v < 0 {
			writeJSON(w, http.StatusBadRequest, control.Response{Error: fmt.Sprintf("bad tail %q", t)})
			return
		}
		n = v
	}
	lines, err := tailLines(h.opts.Backend, r.URL.Query().Get("name"), n)
	if err != nil {
		writeJSON(w, http.StatusNotFound, control.Response{Error: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	for _, l := range lines {
		_, _ = io.WriteString(w, l+"\n")
	}
}

// Authorized reports whether r carries token as a bearer token, in time
// that does not depend on how much of it matches. An empty token
// authorizes nothing.
func Authorized(r *http.Request, token []byte) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(token) == 0 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), token) == 1
}

func (h *handler) action(w http.ResponseWriter, r *http.Request) {
	op := r.PathValue("op")
	if !slices.Contains(control.Ops, op) {
		http.NotFound(w, r)
		return
	}
	if len(h.opts.Token) == 0 || h.opts.Backend == nil {
		h.log.Warn("web ui action refused: actions are disabled", "op", op, "peer", r.RemoteAddr)
		writeJSON(w, http.StatusForbidden, control.Response{Error: "actions are disabled: set ui.actions: true and ui.token_file in the config to allow them"})
		return
	}
	if !Authorized(r, h.opts.Token) {
		h.log.Warn("web ui action refused: wrong or missing token", "op", op, "peer", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="podvisor"`)
		writeJSON(w, http.StatusUnauthorized, control.Response{Error: "wrong or missing token"})
		return
	}
	var req control.Request
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeJSON(w, http.StatusBadRequest, control.Response{Error: "bad request body: " + err.Error()})
		return
	}
	if msg := control.Validate(op, req); msg != "" {
		writeJSON(w, http.StatusBadRequest, control.Response{Error: msg})
		return
	}
	h.log.Info("web ui command", "op", op, "names", strings.Join(req.Names, " "), "signal", req.Signal, "peer", r.RemoteAddr)
	ctx, cancel := context.WithTimeout(r.Context(), ActionTimeout)
	defer cancel()
	writeJSON(w, http.StatusOK, h.opts.Backend.Command(ctx, op, req))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// MaxTokenFile bounds a token file: it holds one token.
const MaxTokenFile = 4096

// ReadToken reads the token for actions from path. The file must be a
// regular file readable by nobody but its owner (mode 0600 or stricter),
// of at most MaxTokenFile bytes, holding at least 16 characters;
// surrounding white space is dropped. Nothing at path can make it wait: a
// FIFO or a device is opened without blocking and refused by its type. The
// token itself never appears in an error. `podvisor run` and `podvisor
// check` both judge the file with this.
func ReadToken(path string) ([]byte, error) {
	const fix = "put the token in a regular file of mode 0600 and name it in ui.token_file"
	// O_NONBLOCK: opening a FIFO would otherwise wait for a writer, at a
	// point of the start where SIGTERM is not yet acted on.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("ui token file %s: %w (%s)", path, err, fix)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ui token file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("ui token file %s is %s, not a regular file (%s)", path, describeType(st.Mode()), fix)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("ui token file %s has mode %04o: it must not be readable or writable by group or others (chmod 600)", path, perm)
	}
	if st.Size() > MaxTokenFile {
		return nil, fmt.Errorf("ui token file %s holds %d bytes: a token file holds one token, at most %d bytes", path, st.Size(), MaxTokenFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTokenFile+1))
	if err != nil {
		return nil, fmt.Errorf("ui token file %s: %w", path, err)
	}
	if len(b) > MaxTokenFile { // it grew since the stat
		return nil, fmt.Errorf("ui token file %s holds more than %d bytes: a token file holds one token", path, MaxTokenFile)
	}
	tok := []byte(strings.TrimSpace(string(b)))
	if len(tok) < 16 {
		return nil, fmt.Errorf("ui token file %s holds %d characters: use at least 16 (for example: head -c 24 /dev/urandom | base64)", path, len(tok))
	}
	return tok, nil
}

// describeType names a file type that is not a regular file.
func describeType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "not a plain file (" + m.Type().String() + ")"
	}
}
