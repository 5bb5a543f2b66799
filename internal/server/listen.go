package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
)

// Listen binds addr for the HTTP server. The caller binds before spawning
// any child, so a busy port fails the start cleanly. The error reads
// "listen :9464: address already in use" and still matches
// errors.Is(err, syscall.EADDRINUSE).
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return LimitListener(ln, MaxConns), nil
	}
	// net's own message ("listen tcp :9464: bind: address already in use")
	// names layers a user does not care about; keep only the cause.
	var se *os.SyscallError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("listen %s: %w", addr, se.Err)
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return nil, fmt.Errorf("listen %s: %w", addr, oe.Err)
	}
	return nil, fmt.Errorf("listen %s: %w", addr, err)
}

// NewHTTPServer wraps h in an http.Server with every timeout and the header
// size bounded, so slow or hostile clients cannot hold connections or memory
// indefinitely (Go's zero values mean no limits). Server errors go to
// opts.Logger. The caller owns Serve and Shutdown.
func NewHTTPServer(h http.Handler, opts Options) *http.Server {
	return &http.Server{
		Handler:           Serving(h),
		ConnContext:       connContext,
		ReadHeaderTimeout: orDefault(opts.ReadHeaderTimeout, defaultReadHeaderTimeout),
		ReadTimeout:       orDefault(opts.ReadTimeout, defaultReadTimeout),
		WriteTimeout:      orDefault(opts.WriteTimeout, defaultWriteTimeout),
		IdleTimeout:       orDefault(opts.IdleTimeout, defaultIdleTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(opts.logger().Handler(), slog.LevelWarn),
	}
}
