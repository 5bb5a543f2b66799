package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/podvisor/podvisor/internal/server"
)

// liveHTTP is the read-only HTTP server, which a reload can move to another
// address (or turn off, or on) while podvisor runs. The new address is bound
// before the old server stops, so a busy port leaves the old one serving.
type liveHTTP struct {
	handler http.Handler
	opts    server.Options
	log     *slog.Logger

	mu   sync.Mutex // reloads come from the supervisor loop, exit from run
	addr string
	srv  *http.Server
}

// serve binds addr ("off": nothing) and serves it.
func (l *liveHTTP) serve(addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.switchTo(addr)
}

func (l *liveHTTP) switchTo(addr string) error {
	var srv *http.Server
	if addr != "off" {
		ln, err := server.Listen(addr)
		if err != nil {
			return err
		}
		srv = server.NewHTTPServer(l.handler, l.opts)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				l.log.Error("http server", "err", err)
			}
		}()
		l.log.Info("serving /readyz /livez /status /metrics /timeline /events", "addr", ln.Addr().String())
	}
	old := l.srv
	l.srv, l.addr = srv, addr
	if old != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), httpShutdown)
			defer cancel()
			_ = old.Shutdown(ctx)
		}()
	}
	return nil
}

// apply moves the server to addr after a reload. It is called from the
// supervisor's loop, so the work is done elsewhere.
func (l *liveHTTP) apply(addr string) {
	go func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if addr == l.addr {
			return
		}
		if err := l.switchTo(addr); err != nil {
			l.log.Error("reload: cannot move the HTTP server; it keeps serving where it was", "addr", addr, "err", err)
		}
	}()
}

// shutdown stops the server at exit. Its graceful part fits in what is left
// of shutdown_timeout (by, when not zero): an open request must not stretch
// the exit past it, so then the connections are closed.
func (l *liveHTTP) shutdown(by time.Time) {
	l.mu.Lock()
	srv := l.srv
	l.srv = nil
	l.mu.Unlock()
	if srv == nil {
		return
	}
	d := httpShutdown
	if !by.IsZero() {
		d = min(d, max(time.Until(by), 0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}
