package control

import (
	"net/http"

	"github.com/podvisor/podvisor/api"
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

// DownResponse is POST /v1/down's answer (package api).
type DownResponse = api.DownResponse

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
