package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/podvisor/podvisor/api"
)

// Bounds on what the client reads of one answer: 200 processes take well
// under 100 KiB of status; 200 processes with 16 incarnations each take
// about 2 MiB of timeline.
const (
	maxStatusBytes   = 4 << 20
	maxTimelineBytes = 16 << 20
)

// fetch GETs path from the HTTP port and returns the body of a 200 answer.
// what names the document in errors ("status").
func (c *Client) fetch(ctx context.Context, path, what string, limit int64) ([]byte, error) {
	if c.web == nil {
		return nil, errNoAddr
	}
	u := url.URL{Scheme: "http", Host: c.addr, Path: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", c.addr, err)
	}
	resp, err := c.web.Do(req)
	if err != nil {
		return nil, fmt.Errorf("no podvisor answering at %s: %w", c.addr, dialCause(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", what, c.addr, dialCause(err))
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return body, nil
	case http.StatusMisdirectedRequest: // podvisor's Host check: say why
		line, _, _ := strings.Cut(string(body), "\n")
		if len(line) > 300 {
			line = line[:300] + "..."
		}
		return nil, fmt.Errorf("%s answered %s: %q", c.addr, resp.Status, line)
	case http.StatusNotFound:
		return nil, fmt.Errorf("unexpected answer from %s: %s (serves it no %s: an older podvisor, or something else?)", c.addr, resp.Status, path)
	}
	return nil, &StatusError{Addr: c.addr, Path: path, Code: resp.StatusCode, Status: resp.Status, Body: string(body)}
}

// StatusError is an HTTP answer other than 200 from the HTTP port.
type StatusError struct {
	Addr, Path string
	Code       int    // 503
	Status     string // "503 Service Unavailable"
	Body       string // what it said (a probe's reason)
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("unexpected answer from %s: %s", e.Addr, e.Status)
}

// decodeDoc fetches path and decodes it into v.
func (c *Client) decodeDoc(ctx context.Context, path, what string, limit int64, v any) error {
	body, err := c.fetch(ctx, path, what, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("unexpected answer from %s: not a podvisor %s: %w", c.addr, what, err)
	}
	return nil
}

// Status returns the processes and their states: GET /status on the HTTP
// port, or, with only a control socket, GET /v1/status there.
func (c *Client) Status(ctx context.Context) (api.Status, error) {
	var st api.Status
	if c.web == nil && c.sock != nil {
		return c.socketStatus(ctx)
	}
	err := c.decodeDoc(ctx, "/status", "status", maxStatusBytes, &st)
	return st, err
}

// Timeline returns the start-up and shutdown timeline: from the control
// socket when there is one, else from the HTTP port.
func (c *Client) Timeline(ctx context.Context) (api.Timeline, error) {
	var d api.Timeline
	if c.sock != nil {
		err := c.socketDoc(ctx, "/v1/timeline", maxTimelineBytes, &d)
		return d, err
	}
	err := c.decodeDoc(ctx, "/timeline", "timeline", maxTimelineBytes, &d)
	return d, err
}

// Probe is the answer of /readyz or /livez.
type Probe struct {
	OK     bool   // 200
	Detail string // the body: why not ready, or "ok"
}

// Readyz asks the HTTP port whether podvisor is ready (GET /readyz).
func (c *Client) Readyz(ctx context.Context) (Probe, error) { return c.probe(ctx, "/readyz") }

// Livez asks the HTTP port whether podvisor's loop answers (GET /livez).
func (c *Client) Livez(ctx context.Context) (Probe, error) { return c.probe(ctx, "/livez") }

func (c *Client) probe(ctx context.Context, path string) (Probe, error) {
	body, err := c.fetch(ctx, path, path[1:], 64<<10)
	var se *StatusError
	switch {
	case err == nil:
		return Probe{OK: true, Detail: strings.TrimSpace(string(body))}, nil
	case errors.As(err, &se) && se.Code == http.StatusServiceUnavailable:
		return Probe{Detail: strings.TrimSpace(se.Body)}, nil
	}
	return Probe{}, err
}

// OpenAPI returns the OpenAPI document that describes both listeners, from
// the control socket when there is one, else from the HTTP port.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	if c.sock != nil {
		body, err := c.socketGet(ctx, "/openapi.json")
		if err != nil {
			return nil, err
		}
		defer body.Close()
		return io.ReadAll(io.LimitReader(body, maxStatusBytes))
	}
	return c.fetch(ctx, "/openapi.json", "OpenAPI document", maxStatusBytes)
}
