package api

import (
	"net/url"
	"strconv"
	"time"
)

// LogsQuery selects the lines GET /v1/logs answers with; Values is its
// query string.
type LogsQuery struct {
	Name   string    // "" for every process, interleaved by time and prefixed
	Tail   int       // the last Tail lines (after the filters); < 0 for all
	Follow bool      // then new lines until the request ends
	Since  time.Time // lines read at or after Since (zero: no bound)
	Until  time.Time // lines read before Until (zero: no bound)
	Grep   string    // regular expression (Go syntax) a line must match
}

// Values encodes q as GET /v1/logs's query parameters.
func (q LogsQuery) Values() url.Values {
	v := url.Values{}
	if q.Name != "" {
		v.Set("name", q.Name)
	}
	if q.Tail >= 0 {
		v.Set("tail", strconv.Itoa(q.Tail))
	}
	if q.Follow {
		v.Set("follow", "1")
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	if q.Grep != "" {
		v.Set("grep", q.Grep)
	}
	return v
}

// LogLine is one line of a process's output, as `podvisor logs -o json`
// prints it (one JSON object a line) and the MCP tool returns it.
type LogLine struct {
	Process string `json:"process"` // the process that wrote it
	Line    string `json:"line"`    // without its newline
}
