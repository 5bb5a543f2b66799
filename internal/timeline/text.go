package timeline

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
)

// phaseRunes are the text chart's marks: '-' starting, '=' ready, '~'
// stopping; '!' marks a SIGKILL.
var phaseRunes = [...]byte{PhaseStarting: '-', PhaseRunning: '=', PhaseStopping: '~'}

// WriteText draws d as a text Gantt chart width columns wide (bars only),
// followed by the critical chain and, after a teardown, the shutdown report.
func WriteText(w io.Writer, d Doc, width int) error {
	width = max(width, 20)
	l := makeLayout(d)
	nameW := 4
	for _, r := range l.rows {
		nameW = max(nameW, len(r.name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d processes over %s", len(l.rows), fmtSecs(l.span))
	if n := len(d.CriticalChain); n > 0 {
		fmt.Fprintf(&b, "; last ready: %s at +%s", clean(d.CriticalChain[n-1].Process), fmtSecs(d.CriticalChain[n-1].ReadyAt))
	}
	b.WriteString("\n")

	// Axis: tick labels above the bars.
	step := tickStep(l.span, max(width/12, 1))
	axis := []byte(strings.Repeat(" ", width+12))
	for t := 0.0; t <= l.span+1e-9; t += step {
		label := fmtSecs(t)
		c := col(t, l.span, width)
		if c+len(label) <= len(axis) {
			copy(axis[c:], label)
		}
	}
	fmt.Fprintf(&b, "  %-*s  %s\n", nameW, "", strings.TrimRight(string(axis), " "))

	for _, r := range l.rows {
		line := []byte(strings.Repeat(" ", width))
		for _, br := range r.bars {
			from, to := col(br.from, l.span, width), col(br.to, l.span, width)
			for c := from; c <= to && c < width; c++ {
				line[c] = phaseRunes[br.phase]
			}
		}
		for _, k := range r.kills {
			if c := col(k, l.span, width); c < width {
				line[c] = '!'
			}
		}
		mark := " "
		if r.critical {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %-*s |%s| %s\n", mark, nameW, clean(r.name), line, rowNote(r))
	}
	b.WriteString("  - starting  = ready  ~ stopping  ! SIGKILL  * critical chain\n")

	if len(d.CriticalChain) > 0 {
		b.WriteString("\ncritical chain (time to ready after @start):\n")
		for _, lk := range d.CriticalChain {
			gate := ""
			if lk.Gates != "" {
				gate = "  (" + lk.Gates + " gated the next)"
			}
			fmt.Fprintf(&b, "  %-*s @%s +%s%s\n", nameW, clean(lk.Process), fmtSecs(lk.SpawnedAt), fmtSecs(lk.TimeToReady), gate)
		}
	}
	if sd := d.Shutdown; sd != nil {
		fmt.Fprintf(&b, "\nshutdown (%s): %s of %s used, %s left\n", clean(sd.Cause), fmtSecs(sd.UsedSeconds), fmtSecs(sd.BudgetSeconds), fmtSecs(sd.LeftSeconds))
		for _, s := range sd.Processes {
			took := "-"
			if s.StopSeconds != nil {
				took = fmtSecs(*s.StopSeconds)
			}
			fmt.Fprintf(&b, "  %-*s stop took %-8s ended by %s", nameW, clean(s.Process), took, s.EndedBy)
			if s.SIGKILLed {
				b.WriteString(" (SIGKILLed)")
			}
			if s.Cause {
				b.WriteString(" (began the teardown)")
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rowNote(r row) string {
	var parts []string
	if r.readyAt >= 0 && r.spawnAt >= 0 {
		parts = append(parts, fmt.Sprintf("ready +%s (%s)", fmtSecs(r.readyAt), fmtSecs(r.readyAt-r.spawnAt)))
	}
	if n := len(r.exits); n > 1 {
		parts = append(parts, fmt.Sprintf("%d exits", n))
	}
	if r.oom {
		parts = append(parts, "OOMKilled")
	}
	return strings.Join(parts, ", ")
}

// col maps t in [0, span] to a column in [0, width-1].
func col(t, span float64, width int) int {
	c := int(math.Floor(t / span * float64(width-1)))
	return min(max(c, 0), width-1)
}

// fmtSecs shows seconds with a precision that suits their size.
func fmtSecs(s float64) string {
	switch {
	case s < 0:
		return "-" + fmtSecs(-s)
	case s == 0:
		return "0s"
	case s < 1:
		return fmt.Sprintf("%.0fms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2fs", s)
	case s < 100:
		return fmt.Sprintf("%.1fs", s)
	default:
		return fmt.Sprintf("%.0fs", s)
	}
}

// clean keeps text from the server from driving the terminal.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
