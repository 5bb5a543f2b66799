package tui

import (
	"context"
	"encoding/json"
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
					if !color && strings.Contains(l, "\x1b") {
						t.Errorf("NO_COLOR: escape sequence in %q", l)
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
