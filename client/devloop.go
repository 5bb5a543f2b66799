package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/podvisor/podvisor/api"
)

// maxExecFrame bounds one line of exec's answer (a 32 KiB read, base64,
// JSON).
const maxExecFrame = 1 << 20

// Exec runs command in process name's context (its environment, user and
// working directory) through the podvisor on the control socket, copying
// its output to stdout and stderr, and returns its exit code (podvisor
// exec). An error means no exit code came (not started, or the connection
// broke); code is then the one to exit with.
func (c *Client) Exec(ctx context.Context, name string, command []string, stdout, stderr io.Writer) (int, error) {
	body, err := json.Marshal(api.ExecRequest{Name: name, Command: command})
	if err != nil {
		return 1, err
	}
	res, err := c.socketDo(ctx, http.MethodPost, "/v1/exec", bytes.NewReader(body))
	if err != nil {
		return 1, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 1, c.refusal(res)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), maxExecFrame)
	for sc.Scan() {
		var fr api.ExecFrame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			return 1, fmt.Errorf("control socket %s: bad exec frame: %w", c.socket, err)
		}
		switch {
		case fr.ExitCode != nil && fr.Error != "":
			return *fr.ExitCode, errors.New(fr.Error)
		case fr.ExitCode != nil:
			return *fr.ExitCode, nil
		case fr.Stream == "stdout":
			_, _ = stdout.Write(fr.Data)
		case fr.Stream == "stderr":
			_, _ = stderr.Write(fr.Data)
		}
	}
	if err := sc.Err(); err != nil {
		return 1, fmt.Errorf("control socket %s: exec: %w", c.socket, err)
	}
	return 1, fmt.Errorf("control socket %s: the answer ended without an exit code", c.socket)
}

// Down asks the podvisor on the control socket to stop as a SIGTERM would,
// and waits for its end: the run's exit code and shutdown report (podvisor
// down).
func (c *Client) Down(ctx context.Context) (api.DownResponse, error) {
	res, err := c.socketDo(ctx, http.MethodPost, "/v1/down", nil)
	if err != nil {
		return api.DownResponse{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return api.DownResponse{}, c.refusal(res)
	}
	var out api.DownResponse
	if err := json.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&out); err != nil {
		return out, fmt.Errorf("control socket %s: no shutdown report (HTTP %d): %w", c.socket, res.StatusCode, err)
	}
	return out, nil
}

// refusal is the error a non-200 answer carries, in the server's words.
func (c *Client) refusal(res *http.Response) error {
	var out api.CommandResponse
	if json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out) == nil && out.Error != "" {
		return errors.New(out.Error)
	}
	return fmt.Errorf("control socket %s: HTTP %s", c.socket, res.Status)
}

// Upgrade sends GET path on the control socket asking to switch to
// protocol (an HTTP/1.1 upgrade, as podvisor attach does) and returns the
// connection taken over.
func (c *Client) Upgrade(ctx context.Context, path, protocol string) (io.ReadWriteCloser, error) {
	return c.UpgradeRequest(ctx, http.MethodGet, path, protocol, nil)
}

// UpgradeRequest is Upgrade with a method and a body (nil: none): POST
// /v1/exec sends its request so for podvisor exec -i/-t.
func (c *Client) UpgradeRequest(ctx context.Context, method, path, protocol string, body []byte) (io.ReadWriteCloser, error) {
	if c.sock == nil {
		return nil, errNoSocket
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, "http://podvisor"+path, rd)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Connection", "Upgrade")
	hr.Header.Set("Upgrade", protocol)
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	res, err := c.sock.Do(hr)
	if err != nil {
		return nil, c.socketError(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		defer res.Body.Close()
		return nil, c.refusal(res)
	}
	rw, ok := res.Body.(io.ReadWriteCloser)
	if !ok {
		res.Body.Close()
		return nil, errors.New("upgrade: the connection cannot be taken over")
	}
	return rw, nil
}
