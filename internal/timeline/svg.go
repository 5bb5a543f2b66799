package timeline

import (
	"fmt"
	"io"
	"strings"
)

// Colours of the SVG chart, one per phase.
var phaseColours = [...]string{PhaseStarting: "#f0ad4e", PhaseRunning: "#5cb85c", PhaseStopping: "#d9534f"}

var phaseNames = [...]string{PhaseStarting: "starting", PhaseRunning: "ready", PhaseStopping: "stopping"}

// Geometry of the SVG chart, in pixels.
const (
	chartW     = 900.0 // the time axis
	chartTop   = 56.0  // above the first row: the title and the axis labels
	chartRight = 150.0 // right of the axis: each row's note
)

// chart is one SVG chart: the layout of its rows, and the sizes that
// depend on how many rows and how long their names are.
type chart struct {
	layout
	rowH, font, left, width, height float64
}

func newChart(d Doc) *chart {
	c := &chart{layout: makeLayout(d), rowH: 22, font: 12}
	if len(c.rows) > 40 {
		c.rowH, c.font = 12, 9
	}
	nameW := 0
	for _, r := range c.rows {
		nameW = max(nameW, len(r.name))
	}
	c.left = 20 + float64(min(nameW, 40))*c.font*0.62
	c.width = c.left + chartW + chartRight
	c.height = chartTop + c.rowH*float64(len(c.rows)) + 60
	return c
}

// x is where t seconds are on the axis; y is the top of row i.
func (c *chart) x(t float64) float64 { return c.left + t/c.span*chartW }
func (c *chart) y(i int) float64     { return chartTop + c.rowH*float64(i) }

// WriteSVG draws d as an SVG Gantt chart: a row per process with its
// incarnations coloured by phase, SIGKILLs marked, the critical chain
// highlighted, and an arrow per dependency from the instant it was met to
// the dependent's spawn. Rows shrink for large configs so that 200
// processes stay one scrollable page.
func WriteSVG(w io.Writer, d Doc) error {
	c := newChart(d)
	var b strings.Builder
	c.writeHead(&b, d)
	c.writeGrid(&b)
	for i, r := range c.rows {
		c.writeRow(&b, i, r)
	}
	c.writeArrows(&b, d)
	c.writeLegend(&b)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHead writes the svg element, the arrow markers, the background and
// the title.
func (c *chart) writeHead(b *strings.Builder, d Doc) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="%.0f">`+"\n", c.width, c.height, c.width, c.height, c.font)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>` +
		`<marker id="arrow-critical" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1f4e99"/></marker></defs>` + "\n")
	fmt.Fprintf(b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", c.width, c.height)
	title := fmt.Sprintf("podvisor timeline: %d processes over %s", len(c.rows), fmtSecs(c.span))
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
	fmt.Fprintf(b, `<text x="10" y="18" font-size="%.0f" font-weight="bold">%s</text>`+"\n", c.font+2, esc(title))
}

// writeGrid writes the bands behind the critical rows, the time axis and
// its grid.
func (c *chart) writeGrid(b *strings.Builder) {
	for i, r := range c.rows {
		if r.critical {
			fmt.Fprintf(b, `<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="#fff3c4"/>`+"\n", c.y(i), c.width, c.rowH)
		}
	}
	step := tickStep(c.span, 10)
	for t := 0.0; t <= c.span+1e-9; t += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`, c.x(t), chartTop-6, c.x(t), c.y(len(c.rows)))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`+"\n", c.x(t), chartTop-10, esc(fmtSecs(t)))
	}
}

// writeRow writes row i: its label, its bars, its SIGKILLs and its note.
func (c *chart) writeRow(b *strings.Builder, i int, r row) {
	weight, fill := "normal", "#222"
	if r.critical {
		weight, fill = "bold", "#1f4e99"
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" font-weight="%s" fill="%s">%s</text>`+"\n", c.left-8, c.y(i)+c.rowH*0.7, weight, fill, esc(r.name))
	for _, br := range r.bars {
		wd := max(c.x(br.to)-c.x(br.from), 1)
		stroke := ""
		if r.critical {
			stroke = ` stroke="#1f4e99" stroke-width="1.5"`
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s><title>%s %s %s–%s</title></rect>`+"\n",
			c.x(br.from), c.y(i)+c.rowH*0.2, wd, c.rowH*0.6, phaseColours[br.phase], stroke,
			esc(r.name), phaseNames[br.phase], fmtSecs(br.from), fmtSecs(br.to))
	}
	for _, k := range r.kills {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="3" height="%.1f" fill="#000000"><title>%s SIGKILL at %s</title></rect>`+"\n", c.x(k)-1.5, c.y(i)+c.rowH*0.1, c.rowH*0.8, esc(r.name), fmtSecs(k))
	}
	if r.readyAt >= 0 {
		note := "ready +" + fmtSecs(r.readyAt)
		if r.oom {
			note += ", OOMKilled"
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#555">%s</text>`+"\n", c.left+chartW+6, c.y(i)+c.rowH*0.7, esc(note))
	}
}

// writeArrows writes the dependency arrows: from the instant the condition
// held to the dependent's spawn.
func (c *chart) writeArrows(b *strings.Builder, d Doc) {
	critEdge := map[[2]string]bool{}
	for j := 1; j < len(d.CriticalChain); j++ {
		critEdge[[2]string{d.CriticalChain[j].Process, d.CriticalChain[j-1].Process}] = true
	}
	for i, r := range c.rows {
		if r.spawnAt < 0 {
			continue
		}
		for _, dep := range r.deps {
			j, ok := c.index[dep.Name]
			if !ok {
				continue
			}
			from := c.rows[j].spawnAt
			if dep.Condition != "started" && c.rows[j].readyAt >= 0 {
				from = c.rows[j].readyAt
			}
			if from < 0 {
				continue
			}
			colour, widthPx, marker, opacity := "#555", 0.8, "arrow", 0.5
			if critEdge[[2]string{r.name, dep.Name}] {
				colour, widthPx, marker, opacity = "#1f4e99", 2, "arrow-critical", 1
			}
			fmt.Fprintf(b, `<path d="M%.1f,%.1f L%.1f,%.1f" stroke="%s" stroke-width="%.1f" fill="none" opacity="%.1f" marker-end="url(#%s)"/>`+"\n",
				c.x(from), c.y(j)+c.rowH/2, c.x(r.spawnAt), c.y(i)+c.rowH/2, colour, widthPx, opacity, marker)
		}
	}
}

// writeLegend writes the legend under the rows.
func (c *chart) writeLegend(b *strings.Builder) {
	ly := c.y(len(c.rows)) + 24
	lx := c.left
	for p := PhaseStarting; p <= PhaseStopping; p++ {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`+"\n", lx, ly-9, phaseColours[p], lx+18, ly, phaseNames[p])
		lx += 100
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="3" height="12" fill="#000000"/><text x="%.1f" y="%.1f">SIGKILL</text>`+"\n", lx, ly-10, lx+8, ly)
	lx += 100
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="#fff3c4" stroke="#1f4e99"/><text x="%.1f" y="%.1f">critical chain</text>`+"\n", lx, ly-9, lx+18, ly)
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
