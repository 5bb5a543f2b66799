package webui

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/server"
)

// renderIndex writes index.html with the first state filled in, so that the
// page is whole before its script runs: a screenshot taken at load
// (chromium --headless --screenshot) shows the processes (docs/ui.md).
// Placeholders and a five-character escaper rather than html/template or
// package html: linking the template package keeps every exported method in
// the binary for its reflection (+2.3 MB), a template parsed at init costs
// the start of every command, and package html brings its table of 2,000
// entities (+60 KB) for an unescaper never used (docs/BENCHMARKS.md sections
// 19 and 23).
func renderIndex(w io.Writer, fs firstState) error {
	page, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return err
	}
	escape := strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;").Replace
	readyClass, readyText := "s-backoff", "not ready"
	if fs.Ready {
		readyClass, readyText = "s-running", "ready"
	}
	generation := ""
	if fs.Generation > 1 {
		generation = "config generation " + strconv.FormatUint(fs.Generation, 10)
	}
	var rows strings.Builder
	for _, r := range fs.Rows {
		rows.WriteString(`<tr data-name="` + escape(r.Name) + `">`)
		for i, c := range r.Cells {
			switch i {
			case 2:
				rows.WriteString(`<td class="s-` + escape(c) + `">`)
			case 10:
				rows.WriteString(`<td class="detail">`)
			default:
				rows.WriteString(`<td>`)
			}
			rows.WriteString(escape(c) + `</td>`)
		}
		rows.WriteString(`</tr>`)
	}
	_, err = strings.NewReplacer(
		"{{phase}}", escape(fs.Phase),
		"{{ready-class}}", readyClass,
		"{{ready}}", readyText,
		"{{generation}}", generation,
		"{{rows}}", rows.String(),
	).WriteString(w, string(page))
	return err
}

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
	// Pointers: a sort of this struct's own shape added 25 KB of code.
	ps := make([]*server.ProcessStatus, len(st.Processes))
	for i := range st.Processes {
		ps[i] = &st.Processes[i]
	}
	slices.SortFunc(ps, func(a, b *server.ProcessStatus) int { return strings.Compare(a.Name, b.Name) })
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
	if err := renderIndex(w, newFirstState(st, time.Now())); err != nil {
		h.log.Warn("web page", "err", err)
	}
}
