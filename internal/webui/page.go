package webui

import (
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/server"
)

// indexPage is index.html with the first state filled in, so that the page
// is whole before its script runs: a screenshot taken at load
// (chromium --headless --screenshot) shows the processes (docs/ui.md).
var indexPage = template.Must(template.ParseFS(assets, "assets/index.html"))

// firstState is what index.html shows before the event stream answers.
type firstState struct {
	Phase      string
	Ready      bool
	Generation uint64
	Rows       []firstRow
}

// firstRow is a row of the process table: the cells app.js draws, in its
// order (name, type, state, ready, pid, uptime, restarts, last exit, CPU%,
// RSS, waiting for / reason).
type firstRow struct {
	Name  string
	Cells []string
}

func newFirstState(st *server.Status, now time.Time) firstState {
	if st == nil {
		return firstState{Phase: "connecting"}
	}
	fs := firstState{Phase: st.Phase, Ready: st.Ready, Generation: st.Generation}
	ps := slices.Clone(st.Processes)
	slices.SortFunc(ps, func(a, b server.ProcessStatus) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range ps {
		up := "-"
		if p.Pid != 0 && p.StartedAt != nil {
			up = max(now.Sub(*p.StartedAt), 0).Truncate(time.Second).String()
		}
		detail := p.Reason
		if detail == "" {
			detail = p.Status
		}
		if len(p.WaitingFor) > 0 {
			detail = "waiting for " + strings.Join(p.WaitingFor, ", ")
		}
		fs.Rows = append(fs.Rows, firstRow{p.Name, []string{p.Name, p.Type, p.State, server.YesNo(p.Ready),
			server.PidText(p.Pid), up, strconv.Itoa(p.Restarts), server.ExitText(p.ExitCode), "-", "-", detail}})
	}
	return fs
}

// index serves the page with its first state.
func (h *handler) index(w http.ResponseWriter, _ *http.Request) {
	var st *server.Status
	if h.opts.Status != nil {
		s := h.opts.Status()
		st = &s
	}
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store") // a state, not a file
	if err := indexPage.Execute(w, newFirstState(st, time.Now())); err != nil {
		h.log.Warn("web page", "err", err)
	}
}
