package server

import (
	"encoding/json"
	"net/http"
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
