package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Client talks to a podvisor's control socket.
type Client struct {
	Path string
	http *http.Client
}

// NewClient returns a client for the socket at path.
func NewClient(path string) *Client {
	tr := &http.Transport{
		Proxy: nil, // the socket is local; an HTTP_PROXY must not see it
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableKeepAlives: true,
	}
	return &Client{Path: path, http: &http.Client{Transport: tr}}
}

// HTTPClient is the client's HTTP client, which reaches the socket
// whatever the URL's host (podvisor status asks GET /status there).
func (c *Client) HTTPClient() *http.Client { return c.http }

// Do sends a command and returns the server's answer. timeout is how long
// the server waits for the outcome; ctx should allow a little more.
func (c *Client) Do(ctx context.Context, op string, req Request, timeout time.Duration) (Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	u := "http://podvisor/v1/" + op + "?timeout=" + url.QueryEscape(timeout.String())
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(hr)
	if err != nil {
		return Response{}, c.dialError(err)
	}
	defer res.Body.Close()
	var out Response
	if err := json.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&out); err != nil {
		return Response{}, fmt.Errorf("control socket %s: bad answer (HTTP %d): %w", c.Path, res.StatusCode, err)
	}
	if res.StatusCode != http.StatusOK && out.Error == "" {
		out.Error = "HTTP " + res.Status
	}
	out.By = identityOf(res.Header)
	return out, nil
}

// identityOf reads who answered from a reply's headers.
func identityOf(h http.Header) Identity {
	pid, _ := strconv.Atoi(h.Get(HeaderPid))
	return Identity{Pid: pid, Config: h.Get(HeaderConfig)}
}

// Identity asks the podvisor on the socket which one it is.
func (c *Client) Identity(ctx context.Context) (Identity, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://podvisor/v1/identity", nil)
	if err != nil {
		return Identity{}, err
	}
	res, err := c.http.Do(hr)
	if err != nil {
		return Identity{}, c.dialError(err)
	}
	defer res.Body.Close()
	var id Identity
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&id); err != nil {
		return identityOf(res.Header), fmt.Errorf("control socket %s: bad identity (HTTP %d): %w", c.Path, res.StatusCode, err)
	}
	return id, nil
}

// Logs copies a process's tail (the last tail lines; all kept lines if tail
// < 0) to w, then with follow new lines until ctx ends.
func (c *Client) Logs(ctx context.Context, w io.Writer, name string, tail int, follow bool) error {
	return c.LogsWith(ctx, w, LogsQuery{Name: name, Tail: tail, Follow: follow})
}

// dialError explains the usual reasons a socket cannot be reached.
func (c *Client) dialError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("no podvisor is listening on %s (is it running, and is this its control socket? see --control and $PODVISOR_CONTROL)", c.Path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s: only root and the user podvisor runs as may use it", c.Path)
	}
	return fmt.Errorf("control socket %s: %w", c.Path, err)
}

// Get opens GET path (such as /v1/events or /v1/timeline) and returns the
// body of a 200 answer, for the caller to read and close; it streams for
// as long as ctx lasts.
func (c *Client) Get(ctx context.Context, path string) (io.ReadCloser, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://podvisor"+path, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.http.Do(hr)
	if err != nil {
		return nil, c.dialError(err)
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		var out Response
		if json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out) == nil && out.Error != "" {
			return nil, errors.New(out.Error)
		}
		return nil, fmt.Errorf("control socket %s: GET %s: HTTP %s", c.Path, path, res.Status)
	}
	return res.Body, nil
}
