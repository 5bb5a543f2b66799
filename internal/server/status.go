package server

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// Status is the /status document. It is a wire format: field names and types
// are part of the contract (docs/reference.md, "HTTP endpoints"), and it deliberately has no room
// for command lines or environment values.
type Status struct {
	Phase     string          `json:"phase"`
	Ready     bool            `json:"ready"`
	Processes []ProcessStatus `json:"processes"`
	// Generation is the config generation in effect: 1 for the config
	// podvisor started with, one more after each applied reload.
	Generation uint64 `json:"generation"`
}

// ProcessStatus is one process in Status.
type ProcessStatus struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	State    string `json:"state"`
	Pid      int    `json:"pid"` // 0 when not running
	Ready    bool   `json:"ready"`
	Restarts int    `json:"restarts"`
	// ExitCode is the last exit code (128+N for signal N), null if the
	// process never exited.
	ExitCode *int `json:"exit_code"`
	// StartedAt and ReadyAt are RFC 3339 with nanoseconds, null when unset.
	StartedAt  *time.Time `json:"started_at"`
	ReadyAt    *time.Time `json:"ready_at"`
	WaitingFor []string   `json:"waiting_for"` // never null
	Status     string     `json:"status"`      // last STATUS= notification
	Reason     string     `json:"reason"`      // why failed/backoff/stopped; "OOMKilled" after an OOM kill
	// OOMKills counts exits caused by the kernel's OOM killer.
	OOMKills int `json:"oom_kills"`
	// Resources is what the process's tree uses, null when it does not run.
	Resources *Resources `json:"resources"`
	// StoredFDs counts the fds the process keeps in podvisor's fd store
	// (FDSTORE=1, given back to its next incarnation).
	StoredFDs int `json:"stored_fds"`
	// ResourcesNotEnforced says which of the process's resources: limits
	// are not enforced and why (docs/resources.md); "" when all are.
	ResourcesNotEnforced string `json:"resources_not_enforced,omitempty"`
	// Schedule is present for a process with schedule:.
	Schedule *ScheduleStatus `json:"schedule,omitempty"`
}

// ScheduleStatus is a scheduled process's next tick and its counts.
type ScheduleStatus struct {
	NextRun time.Time `json:"next_run"`
	Runs    int       `json:"runs"`    // runs started by ticks
	Skipped int       `json:"skipped"` // ticks skipped while a run was still going
}

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
