package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"

	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/timeline"
)

const (
	ansiReset   = "\x1b[0m"
	ansiReverse = "\x1b[7m"
	ansiBold    = "\x1b[1m"
)

var stateColor = map[string]string{
	"running": "\x1b[32m", "completed": "\x1b[32m",
	"starting": "\x1b[33m", "pending": "\x1b[33m", "backoff": "\x1b[33m", "stopping": "\x1b[33m",
	"failed": "\x1b[31;1m", "stopped": "\x1b[2m",
}

// View renders the screen: exactly m.h lines, none wider than m.w.
// View is the screen, on the alternate screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

// render draws the screen as text.
func (m *Model) render() string {
	w, h := max(m.w, 20), max(m.h, 5)
	var lines []string
	lines = append(lines, m.title(w))
	body := h - 3 // title, result line, key line
	switch m.mode {
	case modeHelp:
		lines = append(lines, fit(helpLines, body)...)
	case modeDeps:
		lines = append(lines, fit(m.depLines(w), body)...)
	case modeTimeline:
		lines = append(lines, fit(m.timelineLines(w), body)...)
	default:
		tableH, logH := m.heights()
		lines = append(lines, m.table(w, tableH)...)
		if m.logName != "" {
			lines = append(lines, m.logPane(w, logH)...)
		}
	}
	lines = append(lines, m.resultLine(w), m.keyLine(w))
	for i, l := range lines {
		lines[i] = m.clip(l, w)
	}
	return strings.Join(lines, "\n")
}

// heights splits the table view's body between the table and, while
// following, the output pane.
func (m *Model) heights() (table, output int) {
	body := max(m.h, 5) - 3 // title, result line, key line
	if m.logName == "" {
		return body, 0
	}
	table = max(body/2, 3)
	return table, body - table
}

// shownLogs are the output lines the pane shows: with a search, only
// those that match.
func (m *Model) shownLogs() []string {
	var ls []string
	for _, l := range m.logLines {
		if m.search == "" || strings.Contains(l, m.search) {
			ls = append(ls, clean(l))
		}
	}
	return ls
}

// maxScroll is how far up the output scrolls: to its first line at the
// top of the pane, not beyond.
func (m *Model) maxScroll() int {
	_, h := m.heights()
	return max(len(m.shownLogs())-(h-1), 0)
}

// fit pads or cuts ls to n lines.
func fit(ls []string, n int) []string {
	if len(ls) > n {
		return ls[:n]
	}
	for len(ls) < n {
		ls = append(ls, "")
	}
	return ls
}

// clip cuts a line to w columns, keeping escape sequences whole (they
// take no width) and closing any style left open.
func (m *Model) clip(s string, w int) string {
	s = ansi.Truncate(s, w, "")
	if i := strings.LastIndex(s, "\x1b["); i >= 0 && !strings.HasPrefix(s[i:], ansiReset) {
		s += ansiReset
	}
	return s
}

func (m *Model) style(code, s string) string {
	if !m.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

// clean drops control characters from text that came from the server, so
// that a reason or output line cannot move the cursor or restyle the screen.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func (m *Model) title(w int) string {
	ready := "not ready"
	if m.status.Ready {
		ready = "ready"
	}
	gen := ""
	if m.status.Generation > 1 {
		gen = fmt.Sprintf(" gen %d", m.status.Generation)
	}
	phase := m.status.Phase
	if phase == "" {
		phase = "?"
	}
	left := fmt.Sprintf("podvisor %s, %s%s, %d processes, sort %s", phase, ready, gen, len(m.procs), sortKeys[m.sortBy])
	if m.filter != "" {
		left += ", filter " + clean(m.filter)
	}
	right := clean(m.conn) + " " + m.src.Where()
	pad := w - width(left) - width(right)
	if pad < 1 {
		return m.style(ansiBold, left)
	}
	return m.style(ansiBold, left) + strings.Repeat(" ", pad) + right
}

type column struct {
	head  string
	width int
}

// table renders the process table in h lines (header included).
func (m *Model) table(w, h int) []string {
	rows := m.rows()
	sel := m.selected(rows)
	nameW := len("NAME")
	for _, n := range rows {
		nameW = max(nameW, width(n))
	}
	nameW = min(nameW, max(12, w/5))
	cols := []column{{"NAME", nameW}, {"STATE", 9}, {"RDY", 3}, {"PID", 7}, {"UPTIME", 6}, {"RST", 3}, {"EXIT", 4}, {"CPU%", 5}, {"RSS", 6}}
	fixed := 1
	for _, c := range cols {
		fixed += c.width + 1
	}
	detailW := max(w-fixed, 10)
	var head strings.Builder
	head.WriteString(" ")
	for _, c := range cols {
		head.WriteString(pad(c.head, c.width) + " ")
	}
	head.WriteString("WAITING FOR / REASON")
	out := []string{m.style(ansiBold, padRight(head.String(), w))}
	n := h - 1
	if n <= 0 {
		return out[:max(h, 0)]
	}
	// Keep the cursor on screen.
	first := 0
	if m.cursor >= n {
		first = m.cursor - n + 1
	}
	now := m.now()
	for i := first; i < len(rows) && i < first+n; i++ {
		p := m.procs[rows[i]]
		mark := " "
		if rows[i] == sel {
			mark = ">"
		}
		cells := []string{
			pad(clean(p.Name), nameW),
			m.style(stateColor[p.State], pad(p.State, 9)),
			pad(server.YesNo(p.Ready), 3),
			pad(server.PidText(p.Pid), 7),
			pad(uptime(p, now), 6),
			pad(strconv.Itoa(p.Restarts), 3),
			pad(server.ExitText(p.ExitCode), 4),
			pad(m.cpuText(p), 5),
			pad(memText(p), 6),
			ansi.Truncate(detail(p), detailW, "…"),
		}
		line := mark + strings.Join(cells, " ")
		if rows[i] == sel { // reverse video is no colour: NO_COLOR keeps it
			line = ansiReverse + ansi.Strip(line) + strings.Repeat(" ", max(0, w-width(ansi.Strip(line)))) + ansiReset
		}
		out = append(out, line)
	}
	if len(rows) == 0 {
		if len(m.procs) == 0 {
			out = append(out, " (waiting for the first status)")
		} else {
			out = append(out, " (no process matches the filter)")
		}
	}
	return fit(out, h)
}

// width is how many columns s takes, escape sequences excluded. Like
// clip, pad and the renderer (unless the terminal asks for grapheme
// clusters, mode 2027), it counts wcwidth per rune: East Asian wide
// characters and emoji take two columns, combining marks none.
func width(s string) int { return ansi.StringWidth(s) }

func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-width(s)))
}

func padRight(s string, w int) string { return pad(s, max(w, 0)) }

func uptime(p *server.ProcessStatus, now time.Time) string {
	d := up(p, now)
	if d < 0 {
		return "-"
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}

func (m *Model) cpuText(p *server.ProcessStatus) string {
	c, ok := m.cpu[p.Name]
	if !ok || !c.ok || p.Pid == 0 {
		return "-"
	}
	return strconv.FormatFloat(c.pct, 'f', 1, 64)
}

func memText(p *server.ProcessStatus) string {
	if p.Resources == nil || p.Pid == 0 {
		return "-"
	}
	b := float64(p.Resources.MemoryBytes)
	for _, u := range []string{"B", "K", "M", "G"} {
		if b < 1024 || u == "G" {
			if u == "B" {
				return fmt.Sprintf("%.0f%s", b, u)
			}
			return fmt.Sprintf("%.1f%s", b, u)
		}
		b /= 1024
	}
	return "-"
}

func detail(p *server.ProcessStatus) string {
	if p.Terminal != "" {
		// what `a` attaches to
		return "[" + p.Terminal + "] " + detailText(p)
	}
	return detailText(p)
}

func detailText(p *server.ProcessStatus) string {
	switch {
	case len(p.WaitingFor) > 0:
		return clean(strings.Join(p.WaitingFor, ", "))
	case p.Reason != "":
		return clean(p.Reason)
	}
	return clean(p.Status)
}

// logPane renders the followed output in h lines, the newest at the
// bottom; with a search, only the matching lines, the match highlighted.
func (m *Model) logPane(w, h int) []string {
	if h <= 0 {
		return nil
	}
	who := m.logName
	if who == "*" {
		who = "all processes"
	}
	head := "── output of " + who
	if m.search != "" {
		head += " (search: " + m.search + ")"
	}
	head += " "
	out := []string{head + strings.Repeat("─", max(0, w-width(head)))}
	ls := m.shownLogs()
	n := h - 1
	end := max(len(ls)-min(m.scroll, m.maxScroll()), 0)
	start := max(end-n, 0)
	for _, l := range ls[start:end] {
		if m.search != "" {
			l = strings.ReplaceAll(l, m.search, ansiReverse+m.search+ansiReset)
		}
		out = append(out, l)
	}
	return fit(out, h)
}

// depLines shows each process with what it depends on and whether that
// holds now, in start order.
func (m *Model) depLines(w int) []string {
	out := []string{m.style(ansiBold, "dependencies (start order; ✓ holds, · not yet)"), ""}
	if len(m.doc.Processes) == 0 {
		return append(out, "(loading…)")
	}
	for _, p := range m.doc.Processes {
		st := "?"
		if ps, ok := m.procs[p.Name]; ok {
			st = ps.State
		}
		line := fmt.Sprintf("%s [%s]", clean(p.Name), m.style(stateColor[st], st))
		if len(p.DependsOn) > 0 {
			var deps []string
			for _, d := range p.DependsOn {
				deps = append(deps, holdMark(m.procs[d.Name], d.Condition)+" "+clean(d.Name)+": "+d.Condition)
			}
			line += "  ← " + strings.Join(deps, ", ")
		}
		out = append(out, line)
	}
	return out
}

func holdMark(p *server.ProcessStatus, cond string) string {
	if p == nil {
		return "·"
	}
	ok := false
	switch cond {
	case "started":
		ok = p.Pid != 0 || p.State == "completed"
	case "ready":
		ok = p.Ready
	case "completed":
		ok = p.State == "completed"
	}
	if ok {
		return "✓"
	}
	return "·"
}

func (m *Model) timelineLines(w int) []string {
	if len(m.doc.Processes) == 0 {
		return []string{"(loading…)"}
	}
	var b strings.Builder
	if err := timeline.WriteText(&b, m.doc, max(w-2, 20)); err != nil {
		return []string{err.Error()}
	}
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

func (m *Model) resultLine(w int) string {
	switch m.input {
	case inputConfirm:
		return m.style(ansiBold, describe(m.pendOp, *m.pending)+"? (y/n)")
	case inputFilter:
		return "filter: " + m.buf + "█"
	case inputSearch:
		return "search output: " + m.buf + "█"
	case inputSignal:
		return "signal to send to " + m.sel + " (HUP, USR1, TERM…): " + m.buf + "█"
	}
	return clean(m.result)
}

var helpLines = []string{
	"keys",
	"  ↑/↓ j/k   move             o         sort by the next column",
	"  /         filter (search in the output pane)",
	"  l, enter  follow the selected process's output   L  follow all",
	"  PgUp/PgDn scroll the output",
	"  esc       back / end the search / stop following / clear the filter",
	"  r         restart            S         stop           s  start",
	"  !         send a signal      R         reload the config",
	"  a         attach to the selected process's terminal ([tty] or [stdin])",
	"  d         dependencies       t         timeline       ?  this help",
	"  q         quit",
	"",
	"Every action asks for confirmation (y) and shows its outcome on the line",
	"below the table. NO_COLOR=1 turns colours off.",
}

func (m *Model) keyLine(w int) string {
	switch m.mode {
	case modeTable:
		return m.style("\x1b[2m", "r restart  S stop  s start  ! signal  R reload  l logs  a attach  / filter  o sort  d deps  t timeline  ? help  q quit")
	default:
		return m.style("\x1b[2m", "esc back  q quit")
	}
}
