package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// maxStatusBytes bounds what a client reads from /status; 200 processes take
// well under 100 KiB.
const maxStatusBytes = 4 << 20

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

// FetchStatus gets /status from the podvisor at addr (as returned by
// DialAddr). It returns the decoded document and the raw body. Errors say
// in a user's words whether nothing answered or something else did.
func FetchStatus(ctx context.Context, c *http.Client, addr string) (Status, []byte, error) {
	u := url.URL{Scheme: "http", Host: addr, Path: "/status"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Status{}, nil, fmt.Errorf("build request for %s: %w", addr, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return Status{}, nil, fmt.Errorf("no podvisor answering at %s: %w", addr, dialCause(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBytes))
	if err != nil {
		return Status{}, nil, fmt.Errorf("read status from %s: %w", addr, dialCause(err))
	}
	if resp.StatusCode == http.StatusMisdirectedRequest { // podvisor's Host check: say why
		line, _, _ := strings.Cut(string(body), "\n")
		return Status{}, nil, fmt.Errorf("%s answered %s: %s", addr, resp.Status, printable(line, 300))
	}
	if resp.StatusCode != http.StatusOK {
		return Status{}, nil, fmt.Errorf("unexpected answer from %s: %s", addr, resp.Status)
	}
	var st Status
	if err := json.Unmarshal(body, &st); err != nil {
		return Status{}, nil, fmt.Errorf("unexpected answer from %s: not a podvisor status: %w", addr, err)
	}
	return st, body, nil
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
