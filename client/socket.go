package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/podvisor/podvisor/api"
)

// waitSlack is how much longer the client waits than the server does, so
// that the server's "still in progress" answer arrives.
const waitSlack = 5 * time.Second

// socketDo sends one request on the control socket.
func (c *Client) socketDo(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	if c.sock == nil {
		return nil, errNoSocket
	}
	hr, err := http.NewRequestWithContext(ctx, method, "http://podvisor"+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	res, err := c.sock.Do(hr)
	if err != nil {
		return nil, c.socketError(err)
	}
	return res, nil
}

// socketGet opens GET path on the control socket and returns the body of a
// 200 answer, for the caller to read and close; it streams for as long as
// ctx lasts. Another answer is an error in the server's words.
func (c *Client) socketGet(ctx context.Context, path string) (io.ReadCloser, error) {
	res, err := c.socketDo(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		var out api.CommandResponse
		if json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out) == nil && out.Error != "" {
			return nil, errors.New(out.Error)
		}
		return nil, fmt.Errorf("control socket %s: GET %s: HTTP %s", c.socket, path, res.Status)
	}
	return res.Body, nil
}

// socketDoc GETs path from the control socket and decodes it into v.
func (c *Client) socketDoc(ctx context.Context, path string, limit int64, v any) error {
	body, err := c.socketGet(ctx, path)
	if err != nil {
		return err
	}
	defer body.Close()
	if err := json.NewDecoder(io.LimitReader(body, limit)).Decode(v); err != nil {
		return fmt.Errorf("control socket %s: GET %s: bad answer: %w", c.socket, path, err)
	}
	return nil
}

// identityOf reads who answered from a reply's headers.
func identityOf(h http.Header) api.Identity {
	pid, _ := strconv.Atoi(h.Get(api.HeaderPid))
	return api.Identity{Pid: pid, Config: h.Get(api.HeaderConfig)}
}

// Command sends an operate command (restart, stop, start, signal, reload)
// and returns the server's answer, whose OK says whether all was done and
// whose By names the podvisor that answered. The server waits for the
// outcome until shortly before ctx's deadline (DefaultWait without one),
// then answers with what it knows; the command goes on regardless.
func (c *Client) Command(ctx context.Context, op string, req api.CommandRequest) (api.CommandResponse, error) {
	wait := DefaultWait
	if dl, ok := ctx.Deadline(); ok {
		wait = max(time.Until(dl)-waitSlack, time.Second)
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+waitSlack)
		defer cancel()
	}
	return c.CommandWait(ctx, op, req, wait)
}

// CommandWait is Command with the server's wait given: ctx should allow a
// few seconds more.
func (c *Client) CommandWait(ctx context.Context, op string, req api.CommandRequest, wait time.Duration) (api.CommandResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return api.CommandResponse{}, err
	}
	res, err := c.socketDo(ctx, http.MethodPost, "/v1/"+op+"?timeout="+url.QueryEscape(wait.String()), bytes.NewReader(body))
	if err != nil {
		return api.CommandResponse{}, err
	}
	return c.readResponse(res)
}

// readResponse decodes a command's answer and who gave it.
func (c *Client) readResponse(res *http.Response) (api.CommandResponse, error) {
	defer res.Body.Close()
	var out api.CommandResponse
	if err := json.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&out); err != nil {
		return api.CommandResponse{}, fmt.Errorf("control socket %s: bad answer (HTTP %d): %w", c.socket, res.StatusCode, err)
	}
	if res.StatusCode != http.StatusOK && out.Error == "" {
		out.Error = "HTTP " + res.Status
	}
	out.By = identityOf(res.Header)
	return out, nil
}

// Restart restarts the named processes.
func (c *Client) Restart(ctx context.Context, names ...string) (api.CommandResponse, error) {
	return c.Command(ctx, "restart", api.CommandRequest{Names: names})
}

// Stop stops the named processes; they stay stopped until started.
func (c *Client) Stop(ctx context.Context, names ...string) (api.CommandResponse, error) {
	return c.Command(ctx, "stop", api.CommandRequest{Names: names})
}

// Start starts the named stopped, failed or completed processes.
func (c *Client) Start(ctx context.Context, names ...string) (api.CommandResponse, error) {
	return c.Command(ctx, "start", api.CommandRequest{Names: names})
}

// Signal sends signal (a name such as "HUP" or "SIGUSR1", or a number) to
// a process's group.
func (c *Client) Signal(ctx context.Context, name, signal string) (api.CommandResponse, error) {
	return c.Command(ctx, "signal", api.CommandRequest{Names: []string{name}, Signal: signal})
}

// Reload re-reads the config and applies it; with dryRun it only returns
// the plan.
func (c *Client) Reload(ctx context.Context, dryRun bool) (api.CommandResponse, error) {
	return c.Command(ctx, "reload", api.CommandRequest{DryRun: dryRun})
}

// Identity asks the podvisor on the socket which one it is.
func (c *Client) Identity(ctx context.Context) (api.Identity, error) {
	res, err := c.socketDo(ctx, http.MethodGet, "/v1/identity", nil)
	if err != nil {
		return api.Identity{}, err
	}
	defer res.Body.Close()
	var id api.Identity
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&id); err != nil {
		return identityOf(res.Header), fmt.Errorf("control socket %s: bad identity (HTTP %d): %w", c.socket, res.StatusCode, err)
	}
	return id, nil
}

// ReopenLogs asks podvisor to reopen its log files (after an external
// logrotate moved them); it returns the answer.
func (c *Client) ReopenLogs(ctx context.Context) (api.CommandResponse, error) {
	res, err := c.socketDo(ctx, http.MethodPost, "/v1/logs/reopen", nil)
	if err != nil {
		return api.CommandResponse{}, err
	}
	return c.readResponse(res)
}
