package timeline

import (
	"fmt"
	"io"
	"strings"
)

// Colours of the SVG chart, one per phase.
var phaseColours = [...]string{PhaseStarting: "#f0ad4e", PhaseRunning: "#5cb85c", PhaseStopping: "#d9534f"}

var phaseNames = [...]string{PhaseStarting: "starting", PhaseRunning: "ready", PhaseStopping: "stopping"}

// WriteSVG draws d as an SVG Gantt chart: a row per process with its
// incarnations coloured by phase, SIGKILLs marked, the critical chain
// highlighted, and an arrow per dependency from the instant it was met to
// the dependent's spawn. Rows shrink for large configs so that 200
// processes stay one scrollable page.
func WriteSVG(w io.Writer, d Doc) error {
	l := makeLayout(d)
	rowH, font := 22.0, 12.0
	if len(l.rows) > 40 {
		rowH, font = 12, 9
	}
	nameW := 0
	for _, r := range l.rows {
		nameW = max(nameW, len(r.name))
	}
	const (
		chartW = 900.0
		top    = 56.0
		right  = 150.0
	)
	left := 20 + float64(min(nameW, 40))*font*0.62
	width := left + chartW + right
	height := top + rowH*float64(len(l.rows)) + 60
	x := func(t float64) float64 { return left + t/l.span*chartW }
	y := func(i int) float64 { return top + rowH*float64(i) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="%.0f">`+"\n", width, height, width, height, font)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>` +
		`<marker id="arrow-critical" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1f4e99"/></marker></defs>` + "\n")
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", width, height)
	title := fmt.Sprintf("podvisor timeline: %d processes over %s", len(l.rows), fmtSecs(l.span))
	if n := len(d.CriticalChain); n > 0 {
		names := make([]string, n)
		for i, lk := range d.CriticalChain {
			names[i] = lk.Process
		}
		if n > 6 { // keep the title within the picture
			names = append(append(names[:2:2], "…"), names[n-2:]...)
		}
		title += fmt.Sprintf("; critical chain (%d) %s", n, strings.Join(names, " → "))
	}
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="%.0f" font-weight="bold">%s</text>`+"\n", font+2, esc(title))

	// Critical rows get a band behind them.
	for i, r := range l.rows {
		if r.critical {
			fmt.Fprintf(&b, `<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="#fff3c4"/>`+"\n", y(i), width, rowH)
		}
	}
	// Time axis and grid.
	step := tickStep(l.span, 10)
	for t := 0.0; t <= l.span+1e-9; t += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`, x(t), top-6, x(t), y(len(l.rows)))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`+"\n", x(t), top-10, esc(fmtSecs(t)))
	}
	// Rows: label and bars.
	for i, r := range l.rows {
		weight, fill := "normal", "#222"
		if r.critical {
			weight, fill = "bold", "#1f4e99"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" font-weight="%s" fill="%s">%s</text>`+"\n", left-8, y(i)+rowH*0.7, weight, fill, esc(r.name))
		for _, br := range r.bars {
			wd := max(x(br.to)-x(br.from), 1)
			stroke := ""
			if r.critical {
				stroke = ` stroke="#1f4e99" stroke-width="1.5"`
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s><title>%s %s %s–%s</title></rect>`+"\n",
				x(br.from), y(i)+rowH*0.2, wd, rowH*0.6, phaseColours[br.phase], stroke,
				esc(r.name), phaseNames[br.phase], fmtSecs(br.from), fmtSecs(br.to))
		}
		for _, k := range r.kills {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="3" height="%.1f" fill="#000000"><title>%s SIGKILL at %s</title></rect>`+"\n", x(k)-1.5, y(i)+rowH*0.1, rowH*0.8, esc(r.name), fmtSecs(k))
		}
		if r.readyAt >= 0 {
			note := "ready +" + fmtSecs(r.readyAt)
			if r.oom {
				note += ", OOMKilled"
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#555">%s</text>`+"\n", left+chartW+6, y(i)+rowH*0.7, esc(note))
		}
	}
	// Dependency arrows: from the instant the condition held to the spawn.
	critEdge := map[[2]string]bool{}
	for j := 1; j < len(d.CriticalChain); j++ {
		critEdge[[2]string{d.CriticalChain[j].Process, d.CriticalChain[j-1].Process}] = true
	}
	for i, r := range l.rows {
		if r.spawnAt < 0 {
			continue
		}
		for _, dep := range r.deps {
			j, ok := l.index[dep.Name]
			if !ok {
				continue
			}
			from := l.rows[j].spawnAt
			if dep.Condition != "started" && l.rows[j].readyAt >= 0 {
				from = l.rows[j].readyAt
			}
			if from < 0 {
				continue
			}
			colour, widthPx, marker, opacity := "#555", 0.8, "arrow", 0.5
			if critEdge[[2]string{r.name, dep.Name}] {
				colour, widthPx, marker, opacity = "#1f4e99", 2, "arrow-critical", 1
			}
			fmt.Fprintf(&b, `<path d="M%.1f,%.1f L%.1f,%.1f" stroke="%s" stroke-width="%.1f" fill="none" opacity="%.1f" marker-end="url(#%s)"/>`+"\n",
				x(from), y(j)+rowH/2, x(r.spawnAt), y(i)+rowH/2, colour, widthPx, opacity, marker)
		}
	}
	// Legend.
	ly := y(len(l.rows)) + 24
	lx := left
	for p := PhaseStarting; p <= PhaseStopping; p++ {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`+"\n", lx, ly-9, phaseColours[p], lx+18, ly, phaseNames[p])
		lx += 100
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="3" height="12" fill="#000000"/><text x="%.1f" y="%.1f">SIGKILL</text>`+"\n", lx, ly-10, lx+8, ly)
	lx += 100
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="#fff3c4" stroke="#1f4e99"/><text x="%.1f" y="%.1f">critical chain</text>`+"\n", lx, ly-9, lx+18, ly)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// esc escapes text for XML content and attributes, as encoding/xml's
// EscapeText does (which would put that package's initialisation on every
// podvisor start): the five special characters become references, and a
// rune XML cannot hold becomes U+FFFD.
func esc(s string) string {
	var b strings.Builder
	for _, r := range clean(s) {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&#34;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF:
			b.WriteRune(r)
		default:
			b.WriteRune('\uFFFD')
		}
	}
	return b.String()
}
