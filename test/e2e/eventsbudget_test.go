package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openStream opens an event stream with c at url and reads up to its first
// frame; it returns the status code and, on 200, the open body's reader.
func openStream(t *testing.T, c *http.Client, url string) (int, *bufio.Reader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("GET %s: reading the first frame: %v", url, err)
		}
		if strings.HasPrefix(line, "event: status") {
			return resp.StatusCode, br
		}
	}
}

// Issue 34 item 7: the HTTP port's /events and the control socket's
// /v1/events shared one cap of 16 streams, so 16 idle anonymous streams on
// the HTTP port locked the operator's `podvisor ui` out with 503. Each has
// its own budget now.
func TestEvents_ControlSocketHasItsOwnBudget(t *testing.T) {
	sock := filepath.Join(shortTemp(t), "c.sock")
	r := startPodvisor(t, fmt.Sprintf("control: %q\nprocesses:\n  a:\n    command: sleep 1000\n", sock), withHTTP())
	httpClient := &http.Client{Transport: &http.Transport{}} // no timeout: streams stay open
	const httpStreams = 16
	for i := range httpStreams {
		if code, _ := openStream(t, httpClient, r.URL("/events")); code != http.StatusOK {
			t.Fatalf("HTTP stream %d: %d", i+1, code)
		}
	}
	if code, _ := openStream(t, httpClient, r.URL("/events")); code != http.StatusServiceUnavailable {
		t.Errorf("HTTP stream %d: %d, want 503 (the HTTP port's cap)", httpStreams+1, code)
	}
	eventually(t, 10*time.Second, func() bool { _, err := net.Dial("unix", sock); return err == nil }, "control socket at %s", sock)
	unixClient := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	if code, _ := openStream(t, unixClient, "http://podvisor/v1/events"); code != http.StatusOK {
		t.Fatalf("control socket stream with the HTTP port's streams all taken: %d, want 200", code)
	}
}
