package tui

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// following returns a model at 80x24 following the selected process, with
// lines already in its output pane.
func following(t *testing.T, lines ...string) *Model {
	t.Helper()
	m := New(context.Background(), &fakeSource{}, false)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.applyFrame(statusFrame(t, 3))
	m.Update(textKey("l"))
	for _, l := range lines {
		m.Update(logMsg{gen: m.logGen, line: l})
	}
	return m
}

func numbered(n int) []string {
	var ls []string
	for i := 1; i <= n; i++ {
		ls = append(ls, fmt.Sprintf("line %03d", i))
	}
	return ls
}

func key(code rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code} }

// PgUp stops at the first line: the pane never scrolls into blank rows,
// and PgDn moves at once.
func TestPgUpStopsAtTheTop(t *testing.T) {
	m := following(t, numbered(30)...)
	for range 5 {
		m.Update(key(tea.KeyPgUp))
	}
	s := ansi.Strip(m.render())
	if !strings.Contains(s, "line 001") || !strings.Contains(s, "line 010") {
		t.Fatalf("after PgUp x5 the pane does not show the first lines:\n%s", s)
	}
	m.Update(key(tea.KeyPgDown))
	s = ansi.Strip(m.render())
	if strings.Contains(s, "line 001") || !strings.Contains(s, "line 020") {
		t.Fatalf("PgDn after the top did not scroll down at once:\n%s", s)
	}
}

// Esc ends a search: the next output shown is not filtered by it.
func TestEscEndsTheSearch(t *testing.T) {
	m := following(t, "alpha", "beta")
	m.Update(textKey("/"))
	m.Update(textKey("al"))
	m.Update(key(tea.KeyEnter))
	if s := ansi.Strip(m.render()); !strings.Contains(s, "(search: al)") || strings.Contains(s, "beta") {
		t.Fatalf("the search did not apply:\n%s", s)
	}
	m.Update(key(tea.KeyEscape))
	m.Update(textKey("l"))
	m.Update(logMsg{gen: m.logGen, line: "beta"})
	if s := ansi.Strip(m.render()); strings.Contains(s, "search:") || !strings.Contains(s, "beta") {
		t.Fatalf("the search survived Esc:\n%s", s)
	}
}

// timedSource serves each of its processes' output: line k at time k,
// process k%3 (its name then a number). "" is every process, interleaved
// by time and prefixed with the name, as podvisor's logs route does.
type timedSource struct {
	fakeSource
	names []string
	done  chan string
}

func (s *timedSource) Logs(_ context.Context, w io.Writer, name string, _ bool) error {
	defer func() { s.done <- name }()
	var b strings.Builder
	for k := 1; k <= 30; k++ {
		n := s.names[k%len(s.names)]
		switch name {
		case "":
			fmt.Fprintf(&b, "%s | t=%02d\n", n, k)
		case n:
			fmt.Fprintf(&b, "t=%02d\n", k)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// L interleaves every process's output by time, not process by process.
func TestFollowAllInterleavesByTime(t *testing.T) {
	src := &timedSource{done: make(chan string, 64)}
	m := New(context.Background(), src, false)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 80})
	m.applyFrame(statusFrame(t, 3))
	for n := range m.procs {
		src.names = append(src.names, n)
	}
	m.Update(textKey("L"))
	for calls := 0; ; {
		if name := <-src.done; name == "" || calls+1 == len(src.names) {
			break
		}
		calls++
	}
	for len(m.msgs) > 0 {
		m.Update(<-m.msgs)
	}
	var got []int
	for _, l := range regexp.MustCompile(`t=(\d+)`).FindAllStringSubmatch(ansi.Strip(m.render()), -1) {
		k, _ := strconv.Atoi(l[1])
		got = append(got, k)
	}
	if len(got) != 30 {
		t.Fatalf("%d lines shown, want 30: %v", len(got), got)
	}
	for i, k := range got {
		if k != i+1 {
			t.Fatalf("lines not in time order: %v", got)
		}
	}
}

// NO_COLOR drops colour, not the selection's reverse video.
func TestNoColorKeepsReverseVideo(t *testing.T) {
	m := New(context.Background(), &fakeSource{}, false)
	m.applyFrame(statusFrame(t, 3))
	for _, l := range strings.Split(m.render(), "\n") {
		if strings.HasPrefix(ansi.Strip(l), ">") {
			if !strings.Contains(l, ansiReverse) {
				t.Fatalf("NO_COLOR: the selected row is not in reverse video: %q", l)
			}
			if regexp.MustCompile(`\x1b\[[0-9;]*3[0-7][0-9;]*m`).MatchString(l) {
				t.Fatalf("NO_COLOR: colour in %q", l)
			}
			return
		}
	}
	t.Fatalf("no selected row:\n%s", m.render())
}
