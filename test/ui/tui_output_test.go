package ui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// counter prints n=1, n=2, ... fast, so that a line out of order shows.
const counter = `  count:
    command: ["sh", "-c", "i=0; while :; do i=$((i+1)); echo n=$i; sleep 0.02; done"]
`

// paneCounts returns the numbers of the n=K lines on the screen, top to
// bottom.
func paneCounts(s string) []int {
	var ns []int
	for _, m := range regexp.MustCompile(`(?m)^n=(\d+)\s*$`).FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		ns = append(ns, n)
	}
	return ns
}

// TestTerminalUIOutputPane: the output stays in order after actions; PgUp
// stops at the first line kept; Esc ends a search.
func TestTerminalUIOutputPane(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "", counter)
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "ui", "--control", p.Control)
	x.waitFor(10*time.Second, "the count row", func(s string) bool { return row(s, "count") != nil })
	x.keys("/", "count", "Enter")
	x.waitFor(2*time.Second, "the filter", func(s string) bool { return row(s, "count") != nil && row(s, "db") == nil })
	x.keys("l")
	x.waitFor(3*time.Second, "count's output", func(s string) bool { return strings.Contains(s, "output of count") && len(paneCounts(s)) >= 5 })

	// Actions, each with its outcome: the output stays in order.
	for range 6 {
		x.keys("!", "CONT", "Enter")
		x.waitFor(2*time.Second, "the question", contains("signal count CONT? (y/n)"))
		x.keys("y")
		x.waitFor(5*time.Second, "the outcome", contains("signal count CONT: done"))
	}
	for range 50 {
		s := x.screen()
		ns := paneCounts(s)
		for i := 1; i < len(ns); i++ {
			if ns[i] != ns[i-1]+1 {
				t.Fatalf("output out of order after actions: %v\n%s", ns, s)
			}
		}
	}

	// PgUp, more than the output holds: the pane shows its first lines,
	// not blank rows.
	for range 30 {
		x.keys("PPage")
	}
	x.waitFor(3*time.Second, "the pane scrolled to the top, not blank", func(s string) bool {
		ns := paneCounts(s)
		return len(ns) >= 5 && ns[0] <= 10
	})
	x.keys("NPage")

	// A search, then Esc: the next output shown is not filtered.
	x.keys("/", "n=1", "Enter")
	x.waitFor(2*time.Second, "the search", contains("(search: n=1)"))
	x.escape(func(s string) bool { return !strings.Contains(s, "(search:") })
	x.keys("l")
	x.waitFor(3*time.Second, "count's output again, unfiltered", func(s string) bool {
		return strings.Contains(s, "output of count") && !strings.Contains(s, "search:") && len(paneCounts(s)) >= 5
	})
	x.keys("q")
}

// TestTerminalUIFollowAllByTime: L shows every process's output
// interleaved by time: init's line first, then db's, then api's and
// worker's (the order they started in).
func TestTerminalUIFollowAllByTime(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "")
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "ui", "--control", p.Control)
	x.waitFor(10*time.Second, "the table", func(s string) bool { return row(s, "worker") != nil && strings.Contains(s, "ready, 4 processes") })
	x.keys("L")
	lines := []string{"| init done", "| db listening", "| hello from api", "| worker up"}
	s := x.waitFor(3*time.Second, "every process's output", func(s string) bool {
		for _, l := range lines {
			if !strings.Contains(s, l) {
				return false
			}
		}
		return true
	})
	at := func(l string) int { return strings.Index(s, l) }
	if !(at(lines[0]) < at(lines[1]) && at(lines[1]) < at(lines[2]) && at(lines[1]) < at(lines[3])) {
		t.Errorf("output not in time order (init, db, then api and worker):\n%s", s)
	}
	x.keys("q")
}
