// Package client talks to a running podvisor: its control socket (the
// operate verbs, logs, the timeline, the event stream) and its HTTP port
// (status, readiness, liveness, the timeline, the event stream, the OpenAPI
// document). The documents are the types of package
// github.com/podvisor/podvisor/api, the ones the server sends; both
// listeners are described by schema/openapi.json, and docs/api.md states
// what stays compatible.
//
// podvisor's own command line uses this package for every exchange with a
// running podvisor.
package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// DefaultWait is how long the server waits for an operate command's
// outcome when the context sets no deadline: as long as podvisor's own
// command line waits by default.
const DefaultWait = 60 * time.Second

// Options says where a podvisor listens. Either or both may be set: a
// method that needs the other listener says so in its error.
type Options struct {
	// Socket is the control socket's path (podvisor's control: setting,
	// by default /run/podvisor.sock for root): operate verbs, logs,
	// identity, and the timeline and events.
	Socket string
	// Addr is the HTTP port, host:port (":9464" means 127.0.0.1:9464):
	// status, readyz, livez, and the timeline and events when no Socket is
	// given.
	Addr string
}

// Client talks to one podvisor. It is safe for concurrent use.
type Client struct {
	socket string
	addr   string // dialable host:port
	sock   *http.Client
	web    *http.Client
}

// New returns a client for the podvisor o names. It connects nowhere yet.
func New(o Options) (*Client, error) {
	if o.Socket == "" && o.Addr == "" {
		return nil, errors.New("client: give the control socket's path or the HTTP address (or both)")
	}
	c := &Client{socket: o.Socket}
	if o.Addr != "" {
		addr, err := DialAddr(o.Addr)
		if err != nil {
			return nil, err
		}
		c.addr = addr
		// No proxy: the target is a podvisor in this pod or on this host,
		// and an HTTP_PROXY meant for the outside world must not see it.
		c.web = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	if o.Socket != "" {
		path := o.Socket
		c.sock = &http.Client{Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", path)
			},
			DisableKeepAlives: true,
		}}
	}
	return c, nil
}

// Socket returns the control socket's path ("" when none was given).
func (c *Client) Socket() string { return c.socket }

// Addr returns the HTTP address dialled ("" when none was given).
func (c *Client) Addr() string { return c.addr }

// DialAddr turns a listen-style address into one a client can dial: ":9464"
// means the local host, 127.0.0.1:9464.
func DialAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if port == "" {
		return "", fmt.Errorf("invalid address %q: missing port", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// errNoSocket and errNoAddr say which listener a method needs.
var (
	errNoSocket = errors.New("client: this needs the control socket (Options.Socket)")
	errNoAddr   = errors.New("client: this needs the HTTP port (Options.Addr)")
)

// socketError explains the usual reasons a socket cannot be reached.
func (c *Client) socketError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("no podvisor is listening on %s (is it running, and is this its control socket? see --control and $PODVISOR_CONTROL)", c.socket)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s: only root and the user podvisor runs as may use it", c.socket)
	}
	return fmt.Errorf("control socket %s: %w", c.socket, err)
}

// dialCause strips the layers ("Get \"http://...\": dial tcp ...: connect:")
// that repeat what the caller already says, down to the part a user acts on,
// such as "connection refused". The result still matches errors.Is checks.
func dialCause(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errTimeout{err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errTimeout reports "timeout" while keeping the original error reachable.
type errTimeout struct{ err error }

func (e errTimeout) Error() string { return "timeout" }

func (e errTimeout) Unwrap() error { return e.err }
