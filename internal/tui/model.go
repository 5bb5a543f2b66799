// Package tui is `podvisor ui`: a terminal view of a running podvisor over
// its control socket (or its HTTP listener), built on bubbletea.
//
// Everything it shows comes from the event stream (a status frame, then
// changes) and /timeline; everything it does goes through the same
// commands as `podvisor restart` and friends, each after a y/n
// confirmation, with the outcome shown on the result line. The model is a
// plain value updated by messages: the stream, log and command goroutines
// only send to one channel, which Update drains one message at a time.
package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/timeline"
)

type mode uint8

const (
	modeTable mode = iota
	modeDeps
	modeTimeline
	modeHelp
)

type input uint8

const (
	inputNone input = iota
	inputFilter
	inputSearch
	inputSignal
	inputConfirm
)

var sortKeys = []string{"name", "state", "restarts", "cpu", "rss", "uptime"}

// maxLogLines bounds the log pane's memory.
const maxLogLines = 2000

type (
	frameMsg frame
	connMsg  struct{ state string }
	logMsg   struct {
		gen        int
		name, line string
	}
	resultMsg   string
	timelineMsg struct {
		doc timeline.Doc
		err error
	}
	tickMsg time.Time
)

type cpuSample struct {
	secs float64
	at   time.Time
	pct  float64
	ok   bool
}

// Model is the terminal UI's state.
type Model struct {
	src   Source
	ctx   context.Context
	msgs  chan tea.Msg
	color bool
	now   func() time.Time

	w, h   int
	conn   string
	status server.Status
	procs  map[string]*server.ProcessStatus
	cpu    map[string]cpuSample
	doc    timeline.Doc

	mode    mode
	input   input
	buf     string
	sortBy  int
	filter  string
	cursor  int
	sel     string
	pending *control.Request
	pendOp  string
	result  string

	logName   string // "" none, "*" all
	logLines  []string
	logCancel context.CancelFunc
	logGen    int // which follow session a line belongs to
	search    string
	scroll    int // log lines scrolled up from the bottom

	// Attach, if set, is the command that attaches this terminal to a
	// process (`podvisor attach NAME`); key a runs it for the selected
	// process with a terminal or stdin, the UI suspended until it detaches.
	Attach func(name string) *exec.Cmd
}

// New returns the model for src. color: whether to use colours (false
// with NO_COLOR set).
func New(ctx context.Context, src Source, color bool) *Model {
	return &Model{
		src: src, ctx: ctx, msgs: make(chan tea.Msg, 256), color: color, now: time.Now,
		w: 80, h: 24, conn: "connecting", procs: map[string]*server.ProcessStatus{}, cpu: map[string]cpuSample{},
	}
}

// Init starts the event stream.
func (m *Model) Init() tea.Cmd {
	go m.stream()
	return tea.Batch(m.next, tick(), m.fetchTimeline)
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// next waits for the next message of the background goroutines.
func (m *Model) next() tea.Msg {
	select {
	case msg := <-m.msgs:
		return msg
	case <-m.ctx.Done():
		return tea.Quit()
	}
}

func (m *Model) send(msg tea.Msg) bool {
	select {
	case m.msgs <- msg:
		return true
	case <-m.ctx.Done():
		return false
	}
}

// stream reads the event stream, reconnecting after a second when it ends.
func (m *Model) stream() {
	for m.ctx.Err() == nil {
		body, err := m.src.Events(m.ctx)
		if err == nil {
			m.send(connMsg{"live"})
			err = readFrames(body, func(f frame) { m.send(frameMsg(f)) })
			body.Close()
			if err == nil {
				err = io.EOF
			}
		}
		if m.ctx.Err() != nil {
			return
		}
		m.send(connMsg{"disconnected (" + err.Error() + "); retrying"})
		select {
		case <-m.ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (m *Model) fetchTimeline() tea.Msg {
	ctx, cancel := context.WithTimeout(m.ctx, 5*time.Second)
	defer cancel()
	d, err := m.src.Timeline(ctx)
	return timelineMsg{d, err}
}

// Update applies one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return m, nil
	case tickMsg:
		return m, tick()
	case frameMsg:
		refetch := m.applyFrame(frame(msg))
		if refetch && (m.mode == modeDeps || m.mode == modeTimeline) {
			return m, tea.Batch(m.next, m.fetchTimeline)
		}
		return m, m.next
	case connMsg:
		m.conn = msg.state
		return m, m.next
	case logMsg:
		m.addLog(msg)
		return m, m.next
	case resultMsg:
		// A result is the return of a command (do), not a message of the
		// channel: reading the channel again here would add a second
		// reader, and two readers deliver lines out of order (issue 35).
		m.result = string(msg)
		return m, nil
	case timelineMsg:
		if msg.err == nil {
			m.doc = msg.doc
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.input != inputNone && m.input != inputConfirm {
			return m.inputKey(tea.KeyPressMsg{Text: msg.Content})
		}
	}
	return m, nil
}

// applyFrame updates the state from one event; true when the timeline is
// worth fetching again.
func (m *Model) applyFrame(f frame) bool {
	switch f.event {
	case "status":
		var st server.Status
		if json.Unmarshal(f.data, &st) != nil {
			return false
		}
		m.status = st
		m.procs = make(map[string]*server.ProcessStatus, len(st.Processes))
		for i := range st.Processes {
			m.procs[st.Processes[i].Name] = &st.Processes[i]
		}
		return true
	case "process":
		var ev server.ProcessEvent
		if json.Unmarshal(f.data, &ev) != nil {
			return false
		}
		p := ev.Process
		if old, ok := m.procs[p.Name]; ok && old.Pid == p.Pid {
			p.Resources = old.Resources
		}
		m.procs[p.Name] = &p
		return slices.Contains(ev.Change, "state")
	case "phase":
		var ev server.PhaseEvent
		if json.Unmarshal(f.data, &ev) != nil {
			return false
		}
		m.status.Phase, m.status.Ready, m.status.Generation = ev.Phase, ev.Ready, ev.Generation
		return true
	case "reload":
		var ev server.ReloadEvent
		if json.Unmarshal(f.data, &ev) == nil {
			m.result = fmt.Sprintf("config reloaded: generation %d", ev.Generation)
		}
	case "resources":
		var rs map[string]server.Resources
		if json.Unmarshal(f.data, &rs) != nil {
			return false
		}
		now := m.now()
		for name, r := range rs {
			if p, ok := m.procs[name]; ok {
				r := r
				p.Resources = &r
			}
			prev, ok := m.cpu[name]
			s := cpuSample{secs: r.CPUSeconds, at: now}
			if ok && now.After(prev.at) {
				s.pct = max(0, 100*(r.CPUSeconds-prev.secs)/now.Sub(prev.at).Seconds())
				s.ok = true
			}
			m.cpu[name] = s
		}
	}
	return false
}

// rows returns the names shown, filtered and sorted.
func (m *Model) rows() []string {
	var names []string
	f := strings.ToLower(m.filter)
	for name, p := range m.procs {
		if f == "" || strings.Contains(strings.ToLower(name), f) || strings.Contains(p.State, f) {
			names = append(names, name)
		}
	}
	key := sortKeys[m.sortBy]
	now := m.now()
	sort.Slice(names, func(i, j int) bool {
		a, b := m.procs[names[i]], m.procs[names[j]]
		switch key {
		case "state":
			if a.State != b.State {
				return a.State < b.State
			}
		case "restarts":
			if a.Restarts != b.Restarts {
				return a.Restarts > b.Restarts
			}
		case "cpu":
			if x, y := m.cpu[a.Name].pct, m.cpu[b.Name].pct; x != y {
				return x > y
			}
		case "rss":
			if x, y := rss(a), rss(b); x != y {
				return x > y
			}
		case "uptime":
			if x, y := up(a, now), up(b, now); x != y {
				return x > y
			}
		}
		return a.Name < b.Name
	})
	return names
}

func rss(p *server.ProcessStatus) uint64 {
	if p.Resources == nil {
		return 0
	}
	return p.Resources.MemoryBytes
}

func up(p *server.ProcessStatus, now time.Time) time.Duration {
	if p.Pid == 0 || p.StartedAt == nil {
		return -1
	}
	return now.Sub(*p.StartedAt)
}

// selected returns the name under the cursor, keeping the cursor on the
// same process when the order changes.
func (m *Model) selected(rows []string) string {
	if len(rows) == 0 {
		return ""
	}
	if i := slices.Index(rows, m.sel); i >= 0 {
		m.cursor = i
	}
	m.cursor = min(max(m.cursor, 0), len(rows)-1)
	m.sel = rows[m.cursor]
	return m.sel
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		m.stopLogs()
		return m, tea.Quit
	}
	if m.input != inputNone {
		return m.inputKey(k)
	}
	// Keys typed (or pasted, or sent by tmux) together arrive as one
	// message: each is a command of its own.
	if runes := []rune(k.Text); len(runes) > 1 && k.Mod == 0 {
		var cmds []tea.Cmd
		for i, r := range runes {
			_, cmd := m.key(textKey(string(r)))
			cmds = append(cmds, cmd)
			if m.input != inputNone { // the rest is the input's
				if rest := runes[i+1:]; len(rest) > 0 {
					_, cmd = m.inputKey(textKey(string(rest)))
					cmds = append(cmds, cmd)
				}
				break
			}
		}
		return m, tea.Batch(cmds...)
	}
	rows := m.rows()
	name := m.selected(rows)
	s := k.String()
	switch s {
	case "q":
		m.stopLogs()
		return m, tea.Quit
	case "esc":
		switch {
		case m.mode != modeTable:
			m.mode = modeTable
		case m.search != "":
			m.search, m.scroll = "", 0
		case m.logName != "":
			m.stopLogs()
		default:
			m.filter = ""
		}
	case "?", "h":
		m.mode = modeHelp
	case "d":
		m.mode = modeDeps
		return m, m.fetchTimeline
	case "t":
		m.mode = modeTimeline
		return m, m.fetchTimeline
	case "up", "k":
		m.move(rows, -1)
	case "down", "j":
		m.move(rows, 1)
	case "pgup":
		m.scroll = min(m.scroll+10, m.maxScroll())
	case "pgdown":
		m.scroll = max(0, m.scroll-10)
	case "o":
		m.sortBy = (m.sortBy + 1) % len(sortKeys)
	case "/":
		if m.logName != "" {
			m.input, m.buf = inputSearch, m.search
		} else {
			m.input, m.buf = inputFilter, m.filter
		}
	case "l", "enter":
		if name != "" {
			return m, m.followLogs(name)
		}
	case "L":
		return m, m.followLogs("*")
	case "r", "S", "s":
		if name != "" {
			op := map[string]string{"r": "restart", "S": "stop", "s": "start"}[s]
			m.confirm(op, control.Request{Names: []string{name}})
		}
	case "!":
		if name != "" {
			m.input, m.buf = inputSignal, ""
		}
	case "R":
		m.confirm("reload", control.Request{})
	case "a":
		return m, m.attach(name)
	}
	return m, nil
}

// attach suspends the UI and runs Attach for name, if it has a terminal.
func (m *Model) attach(name string) tea.Cmd {
	p := m.procs[name]
	switch {
	case name == "" || p == nil:
		return nil
	case p.Terminal == "":
		m.result = "attach " + name + ": it has neither tty: true nor stdin: true"
		return nil
	case m.Attach == nil:
		m.result = "attach " + name + ": only over the control socket"
		return nil
	}
	return tea.ExecProcess(m.Attach(name), func(err error) tea.Msg {
		if err != nil {
			return resultMsg("attach " + name + ": " + err.Error())
		}
		return resultMsg("attach " + name + ": detached")
	})
}

func (m *Model) move(rows []string, d int) {
	if len(rows) == 0 {
		return
	}
	m.cursor = min(max(m.cursor+d, 0), len(rows)-1)
	m.sel = rows[m.cursor]
}

func (m *Model) confirm(op string, req control.Request) {
	m.input, m.pendOp, m.pending = inputConfirm, op, &req
}

// textKey is a key press of printable text.
func textKey(s string) tea.KeyPressMsg {
	k := tea.KeyPressMsg{Text: s}
	if r := []rune(s); len(r) > 0 {
		k.Code = r[0]
	}
	return k
}

func (m *Model) inputKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.input == inputConfirm {
		op, req := m.pendOp, *m.pending
		m.input, m.pending = inputNone, nil
		if k.String() != "y" && k.String() != "Y" {
			m.result = describe(op, req) + ": cancelled"
			return m, nil
		}
		m.result = describe(op, req) + ": …"
		return m, m.do(op, req)
	}
	switch k.String() {
	case "esc":
		m.input = inputNone
		return m, nil
	case "enter":
		in := m.input
		m.input = inputNone
		switch in {
		case inputFilter:
			m.filter = m.buf
		case inputSearch:
			m.search, m.scroll = m.buf, 0
		case inputSignal:
			if sig := strings.TrimSpace(m.buf); sig != "" {
				if _, err := control.ParseSignal(sig); err != nil {
					m.result = err.Error()
					return m, nil
				}
				m.confirm("signal", control.Request{Names: []string{m.sel}, Signal: sig})
			}
		}
		return m, nil
	case "backspace":
		if r := []rune(m.buf); len(r) > 0 {
			m.buf = string(r[:len(r)-1])
		}
	default:
		if k.Mod == 0 || k.Mod == tea.ModShift {
			m.buf += k.Text
		}
	}
	if m.input == inputFilter {
		m.filter = m.buf // filter as you type
	}
	return m, nil
}

func describe(op string, req control.Request) string {
	s := op
	if len(req.Names) > 0 {
		s += " " + strings.Join(req.Names, " ")
	}
	if req.Signal != "" {
		s += " " + req.Signal
	}
	return s
}

// do runs a command; its outcome arrives as a resultMsg.
func (m *Model) do(op string, req control.Request) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.ctx, control.DefaultTimeout+5*time.Second)
		defer cancel()
		res, err := m.src.Command(ctx, op, req)
		what := describe(op, req)
		if err != nil {
			return resultMsg(what + ": failed: " + err.Error())
		}
		var parts []string
		if res.Error != "" {
			parts = append(parts, res.Error)
		}
		for _, r := range res.Results {
			parts = append(parts, r.Name+": "+r.Message)
		}
		parts = append(parts, res.Plan...)
		verdict := "done"
		if !res.OK {
			verdict = "refused"
		}
		return resultMsg(what + ": " + verdict + " " + strings.Join(parts, "; "))
	}
}

// followLogs starts following name's output ("*": every process's, as
// one stream that podvisor interleaves by time and prefixes with the
// names; docs/ui.md).
func (m *Model) followLogs(name string) tea.Cmd {
	m.stopLogs()
	ctx, cancel := context.WithCancel(m.ctx)
	m.logGen++
	gen := m.logGen
	m.logName, m.logCancel, m.logLines, m.scroll = name, cancel, nil, 0
	src := name
	if name == "*" {
		src = ""
	}
	go func() {
		w := &lineWriter{send: func(l string) bool { return m.send(logMsg{gen, "", l}) }}
		if err := m.src.Logs(ctx, w, src, true); err != nil && ctx.Err() == nil {
			who := name
			if name == "*" {
				who = "all processes"
			}
			m.send(logMsg{gen, "", "[" + who + ": " + err.Error() + "]"})
		}
	}()
	return nil
}

// stopLogs stops following, and ends the search with it.
func (m *Model) stopLogs() {
	if m.logCancel != nil {
		m.logCancel()
	}
	m.logName, m.logCancel, m.logLines, m.search, m.scroll = "", nil, nil, "", 0
}

func (m *Model) addLog(l logMsg) {
	if m.logName == "" || l.gen != m.logGen {
		return // a line of a session already stopped
	}
	line := l.line
	if l.name != "" {
		line = l.name + " | " + line
	}
	m.logLines = append(m.logLines, line)
	if len(m.logLines) > maxLogLines {
		m.logLines = slices.Clone(m.logLines[len(m.logLines)-maxLogLines:])
	}
}

// lineWriter turns written bytes into lines.
type lineWriter struct {
	send func(string) bool
	part []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.part = append(w.part, b...)
	for {
		i := slices.Index(w.part, '\n')
		if i < 0 {
			break
		}
		if !w.send(string(w.part[:i])) {
			return 0, fmt.Errorf("ui closed")
		}
		w.part = w.part[i+1:]
	}
	return len(b), nil
}
