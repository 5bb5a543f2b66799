package control

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/podvisor/podvisor/internal/timeline"
)

// Downer is what POST /v1/down (podvisor down) needs of the run.
type Downer interface {
	// Down begins the teardown as a SIGTERM does (a second one, like a
	// second SIGTERM, kills everything).
	Down()
	// Ended is closed once the run's end is known; End returns it then.
	Ended() <-chan struct{}
	End() DownResponse
}

// DownResponse is the answer of POST /v1/down: the run's exit code, why it
// ended and the shutdown report.
type DownResponse struct {
	ExitCode int                `json:"exit_code"`
	Cause    string             `json:"cause"`
	Shutdown *timeline.Shutdown `json:"shutdown"`
}

// DownHandler serves POST /v1/down for d: it answers once the teardown is
// over and the run's exit code known, just before the socket closes.
func DownHandler(d Downer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.Down()
		select {
		case <-d.Ended():
			writeJSON(w, http.StatusOK, d.End())
		case <-r.Context().Done():
		}
	})
}

// Down asks the podvisor on the socket to stop as a SIGTERM would, and
// waits for its end.
func (c *Client) Down(ctx context.Context) (DownResponse, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://podvisor/v1/down", nil)
	if err != nil {
		return DownResponse{}, err
	}
	res, err := c.http.Do(hr)
	if err != nil {
		return DownResponse{}, c.dialError(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var refusal Response
		_ = json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&refusal)
		return DownResponse{}, fmt.Errorf("control socket %s: HTTP %d: %s", c.Path, res.StatusCode, refusal.Error)
	}
	var out DownResponse
	if err := json.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&out); err != nil {
		return out, fmt.Errorf("control socket %s: no shutdown report (HTTP %d): %w", c.Path, res.StatusCode, err)
	}
	return out, nil
}
