package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/podvisor/podvisor/internal/timeline"
)

// TimelineSource is what GET /timeline serves; *timeline.Recorder is one.
type TimelineSource interface {
	Doc(now time.Time) timeline.Doc
}

// TimelineHandler serves src's document as JSON (GET /timeline, and
// GET /v1/timeline on the control socket).
func TimelineHandler(src TimelineSource) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		body, err := json.Marshal(src.Doc(time.Now()))
		if err != nil {
			http.Error(w, "encode timeline: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(body, '\n'))
	}
}

// maxTimelineBytes bounds what a client reads from /timeline: 200 processes
// with 16 incarnations each take about 2 MiB.
const maxTimelineBytes = 16 << 20

// FetchTimeline gets /timeline from the podvisor at addr (as returned by
// DialAddr), decoded, and the raw body.
func FetchTimeline(ctx context.Context, c *http.Client, addr string) (timeline.Doc, []byte, error) {
	u := url.URL{Scheme: "http", Host: addr, Path: "/timeline"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return timeline.Doc{}, nil, fmt.Errorf("build request for %s: %w", addr, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return timeline.Doc{}, nil, fmt.Errorf("no podvisor answering at %s: %w", addr, dialCause(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTimelineBytes))
	if err != nil {
		return timeline.Doc{}, nil, fmt.Errorf("read timeline from %s: %w", addr, dialCause(err))
	}
	if resp.StatusCode == http.StatusNotFound {
		return timeline.Doc{}, nil, fmt.Errorf("the podvisor at %s serves no /timeline (an older version?)", addr)
	}
	if resp.StatusCode != http.StatusOK {
		return timeline.Doc{}, nil, fmt.Errorf("unexpected answer from %s: %s", addr, resp.Status)
	}
	var d timeline.Doc
	if err := json.Unmarshal(body, &d); err != nil {
		return timeline.Doc{}, nil, fmt.Errorf("unexpected answer from %s: not a podvisor timeline: %w", addr, err)
	}
	return d, body, nil
}
