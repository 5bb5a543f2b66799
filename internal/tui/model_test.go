package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/timeline"
)

type fakeSource struct{ cmds []string }

func (f *fakeSource) Events(context.Context) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}
func (f *fakeSource) Timeline(context.Context) (timeline.Doc, error) { return timeline.Doc{}, nil }
func (f *fakeSource) Command(_ context.Context, op string, req control.Request) (control.Response, error) {
	f.cmds = append(f.cmds, describe(op, req))
	return control.Response{OK: true, Results: []control.Result{{Name: req.Names[0], OK: true, Message: "restarted"}}}, nil
}
func (f *fakeSource) Logs(context.Context, io.Writer, string, bool) error { return nil }
func (f *fakeSource) Where() string                                       { return "/run/podvisor/control.sock" }

func statusFrame(t *testing.T, n int) frame {
	t.Helper()
	st := server.Status{Phase: "running", Ready: true}
	now := time.Now()
	for i := 0; i < n; i++ {
		st.Processes = append(st.Processes, server.ProcessStatus{
			Name: "process-with-a-long-name-" + string(rune('a'+i%26)) + strings.Repeat("x", i%3), Type: "service", State: "running",
			Pid: 1000 + i, Ready: true, StartedAt: &now, WaitingFor: []string{},
			Reason: "a reason long enough to need cutting at eighty columns, \x1b[31mwith an escape\x1b[0m"})
	}
	b, _ := json.Marshal(st)
	return frame{event: "status", data: b}
}

func TestViewFitsTheScreen(t *testing.T) {
	for _, color := range []bool{true, false} {
		for _, size := range [][2]int{{80, 24}, {120, 40}, {40, 10}} {
			m := New(context.Background(), &fakeSource{}, color)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.applyFrame(statusFrame(t, 50))
			for _, keys := range []string{"", "l", "d", "t", "?"} {
				if keys != "" {
					m.Update(textKey(keys))
				}
				lines := strings.Split(m.render(), "\n")
				if len(lines) != size[1] {
					t.Errorf("%v color %v keys %q: %d lines, want %d", size, color, keys, len(lines), size[1])
				}
				for _, l := range lines {
					if w := width(ansi.Strip(l)); w > size[0] {
						t.Errorf("%v keys %q: line %d columns wide: %q", size, keys, w, l)
					}
					// NO_COLOR: reverse video for the selection (docs/ui.md), nothing else.
					if rest := strings.NewReplacer(ansiReverse, "", ansiReset, "").Replace(l); !color && strings.Contains(rest, "\x1b") {
						t.Errorf("NO_COLOR: escape sequence other than reverse video in %q", l)
					}
					if strings.Contains(ansi.Strip(l), "[31m") {
						t.Errorf("an escape from the server reached the screen: %q", l)
					}
				}
				m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
			}
		}
	}
}

func TestActionsAskFirst(t *testing.T) {
	src := &fakeSource{}
	m := New(context.Background(), src, false)
	m.applyFrame(statusFrame(t, 3))
	_, cmd := m.Update(textKey("r"))
	if cmd != nil || m.input != inputConfirm || !strings.Contains(m.render(), "restart process-with-a-long-name-a? (y/n)") {
		t.Fatalf("r did not ask: %q", m.resultLine(80))
	}
	m.Update(textKey("n"))
	if len(src.cmds) != 0 || !strings.Contains(m.result, "cancelled") {
		t.Fatalf("n: %v %q", src.cmds, m.result)
	}
	m.Update(textKey("j"))
	m.Update(textKey("r"))
	_, cmd = m.Update(textKey("y"))
	m.Update(cmd())
	if len(src.cmds) != 1 || src.cmds[0] != "restart process-with-a-long-name-bx" {
		t.Fatalf("after y: %v", src.cmds)
	}
	if !strings.Contains(m.result, "done") || !strings.Contains(m.result, "restarted") {
		t.Errorf("result %q", m.result)
	}
}

func TestNewLines(t *testing.T) {
	for _, c := range []struct{ prev, next, want []string }{
		{nil, []string{"a", "b"}, []string{"a", "b"}},
		{[]string{"a", "b"}, []string{"a", "b", "c"}, []string{"c"}},
		{[]string{"a", "b", "c"}, []string{"b", "c", "d"}, []string{"d"}},
		{[]string{"a"}, []string{"x"}, []string{"x"}},
	} {
		if got := newLines(c.prev, c.next); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("newLines(%v, %v) = %v, want %v", c.prev, c.next, got, c.want)
		}
	}
}

// TestLogLinesStayInOrderAfterActions drives the model the way bubbletea
// runs it: every command returned runs in a goroutine of its own, so the
// messages of two commands may arrive in either order. Here each round
// runs every pending command and delivers their messages newest first. A
// single reader of the message channel keeps the output in order whatever
// the scheduling; a second reader (issue 35: each action's result added
// one) reorders it.
func TestLogLinesStayInOrderAfterActions(t *testing.T) {
	m := New(context.Background(), &fakeSource{}, false)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	m.applyFrame(statusFrame(t, 3))
	m.Update(textKey("l"))
	const lines = 100
	for i := 1; i <= lines; i++ {
		m.msgs <- logMsg{gen: m.logGen, line: fmt.Sprintf("line %03d", i)}
	}
	pending := []tea.Cmd{m.next} // Init's reader
	round := func() {
		var got []tea.Msg
		for _, c := range pending {
			if c != nil {
				got = append(got, c())
			}
		}
		pending = nil
		for i := len(got) - 1; i >= 0; i-- {
			if b, ok := got[i].(tea.BatchMsg); ok {
				pending = append(pending, b...)
				continue
			}
			_, cmd := m.Update(got[i])
			pending = append(pending, cmd)
		}
	}
	for range 3 { // three restarts, each confirmed
		m.Update(textKey("r"))
		_, cmd := m.Update(textKey("y"))
		pending = append(pending, cmd)
		round()
		round()
	}
	for len(m.msgs) >= len(pending) && len(m.msgs) > 0 {
		round()
	}
	prev := 0
	for _, l := range strings.Split(m.render(), "\n") {
		var n int
		if _, err := fmt.Sscanf(l, "line %d", &n); err != nil {
			continue
		}
		if n != prev+1 && prev != 0 {
			t.Fatalf("output out of order: line %d after line %d:\n%s", n, prev, m.render())
		}
		prev = n
	}
	if prev == 0 {
		t.Fatalf("no output shown:\n%s", m.render())
	}
}
