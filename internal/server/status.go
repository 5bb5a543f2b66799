package server

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// The /status document's types are the API's (package api,
// schema/openapi.json, docs/reference.md "HTTP endpoints").
type (
	Status         = api.Status
	ProcessStatus  = api.ProcessStatus
	ScheduleStatus = api.ScheduleStatus
	PodStatus      = api.PodStatus
	PodCondition   = api.PodCondition
)

// NewStatus converts a snapshot to its wire form.
func NewStatus(s supervisor.Snapshot) Status {
	st := Status{
		Phase:      s.Phase,
		Ready:      isReady(s),
		Processes:  make([]ProcessStatus, 0, len(s.Processes)),
		Generation: s.Generation,
	}
	for _, p := range s.Processes {
		waiting := p.WaitingFor
		if waiting == nil {
			waiting = []string{}
		}
		st.Processes = append(st.Processes, ProcessStatus{
			Name:       p.Name,
			Type:       p.Type,
			Terminal:   p.Terminal,
			State:      p.State,
			Pid:        p.Pid,
			Ready:      p.Ready,
			Restarts:   p.Restarts,
			ExitCode:   p.ExitCode,
			StartedAt:  timeOrNil(p.StartedAt),
			ReadyAt:    timeOrNil(p.ReadyAt),
			WaitingFor: waiting,
			Status:     p.Status,
			Reason:     p.Reason,
			OOMKills:   p.OOMKills,
		})
		if !p.NextRun.IsZero() {
			st.Processes[len(st.Processes)-1].Schedule = &ScheduleStatus{NextRun: p.NextRun, Runs: p.ScheduledRuns, Skipped: p.SkippedRuns}
		}
	}
	return st
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// WriteStatusTable writes st as an aligned table for humans, with uptimes
// measured against now. Text from the server is stripped of control
// characters so a reason or STATUS= line cannot break the layout or send
// escape sequences to the terminal.
func WriteStatusTable(w io.Writer, st Status, now time.Time) error {
	ready := "not ready"
	if st.Ready {
		ready = "ready"
	}
	gen := ""
	if st.Generation > 1 { // reloaded at least once
		gen = fmt.Sprintf(", config generation %d", st.Generation)
	}
	if _, err := fmt.Fprintf(w, "podvisor: %s, %s%s\n", clean(st.Phase), ready, gen); err != nil {
		return fmt.Errorf("write status table: %w", err)
	}
	if st.Pod != nil {
		fmt.Fprintf(w, "pod: %s, %d/%d ready\n", clean(st.Pod.Phase), st.Pod.Ready, st.Pod.Total)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tSTATE\tREADY\tPID\tCPU%\tMEM\tRESTARTS\tLAST EXIT\tUPTIME\tDETAIL")
	for _, p := range st.Processes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n",
			clean(p.Name), clean(p.Type), clean(p.State), YesNo(p.Ready),
			PidText(p.Pid), cpuPercent(p, now), memText(p), p.Restarts, ExitText(p.ExitCode), uptime(p, now), detail(p, now))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write status table: %w", err)
	}
	return nil
}

// YesNo, PidText and ExitText are the status table's cells, shared with
// podvisor ui's table.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func PidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

func ExitText(code *int) string {
	if code == nil {
		return "-"
	}
	return strconv.Itoa(*code)
}

// uptime is shown only for a live child: a stopped process's started_at
// tells when it last ran, not how long it has been up.
func uptime(p ProcessStatus, now time.Time) string {
	if p.Pid == 0 || p.StartedAt == nil {
		return "-"
	}
	return shortDuration(now.Sub(*p.StartedAt))
}

// shortDuration keeps the two most significant units: "45s", "5m3s",
// "3h2m", "2d3h".
func shortDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	default:
		return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
	}
}

// detail says the most useful thing about why a process is where it is,
// and when a scheduled one runs next.
func detail(p ProcessStatus, now time.Time) string {
	var s string
	switch {
	case len(p.WaitingFor) > 0:
		s = clean("waiting for " + strings.Join(p.WaitingFor, ", "))
	case p.Reason != "":
		s = clean(p.Reason)
	default:
		s = clean(p.Status)
	}
	if p.Schedule == nil {
		return s
	}
	next := "next run in " + shortDuration(p.Schedule.NextRun.Sub(now))
	if s == "" {
		return next
	}
	return s + "; " + next
}

func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
