package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/podvisor/podvisor/client"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/timeline"
)

// Source is a podvisor the terminal UI watches and steers: its control
// socket, or its HTTP listener (read-only unless it has a token).
type Source interface {
	// Events opens the event stream (internal/server/events.go).
	Events(ctx context.Context) (io.ReadCloser, error)
	// Timeline returns the timeline document.
	Timeline(ctx context.Context) (timeline.Doc, error)
	// Command performs op and returns the outcome.
	Command(ctx context.Context, op string, req control.Request) (control.Response, error)
	// Logs copies a process's last lines, then new ones while follow and
	// ctx last, to w.
	Logs(ctx context.Context, w io.Writer, name string, follow bool) error
	// Where names the podvisor, for the title line.
	Where() string
}

// resourceEvery is how often the event stream carries resource samples.
const resourceEvery = 2 * time.Second

// logTail is how many recent lines the log pane starts with.
const logTail = 200

// ControlSource watches a podvisor through its control socket.
type ControlSource struct{ C *client.Client }

// Events implements Source.
func (s ControlSource) Events(ctx context.Context) (io.ReadCloser, error) {
	return s.C.EventsBody(ctx, resourceEvery)
}

// Timeline implements Source.
func (s ControlSource) Timeline(ctx context.Context) (timeline.Doc, error) {
	return s.C.Timeline(ctx)
}

// Command implements Source.
func (s ControlSource) Command(ctx context.Context, op string, req control.Request) (control.Response, error) {
	return s.C.CommandWait(ctx, op, req, control.DefaultTimeout)
}

// Logs implements Source.
func (s ControlSource) Logs(ctx context.Context, w io.Writer, name string, follow bool) error {
	return s.C.Logs(ctx, w, control.LogsQuery{Name: name, Tail: logTail, Follow: follow})
}

// Where implements Source.
func (s ControlSource) Where() string { return s.C.Socket() }

// HTTPSource watches a podvisor through its HTTP listener: the event stream
// and /timeline always; actions only with the token of ui.token_file, output
// only where ui.logs is on.
type HTTPSource struct {
	Base   *url.URL
	Token  string
	Client *http.Client
}

func (s HTTPSource) url(path string) string {
	u := *s.Base
	p, q, _ := strings.Cut(path, "?")
	u.Path = strings.TrimSuffix(u.Path, "/") + p
	u.RawQuery = q
	return u.String()
}

func (s HTTPSource) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url(path), nil)
	if err != nil {
		return nil, err
	}
	res, err := s.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		var out control.Response
		if json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out) == nil && out.Error != "" {
			return nil, errors.New(out.Error)
		}
		return nil, fmt.Errorf("GET %s: HTTP %s", path, res.Status)
	}
	return res, nil
}

// Events implements Source.
func (s HTTPSource) Events(ctx context.Context) (io.ReadCloser, error) {
	res, err := s.get(ctx, "/events?resources="+resourceEvery.String())
	if err != nil {
		return nil, err
	}
	return res.Body, nil
}

// Timeline implements Source.
func (s HTTPSource) Timeline(ctx context.Context) (timeline.Doc, error) {
	res, err := s.get(ctx, "/timeline")
	if err != nil {
		return timeline.Doc{}, err
	}
	defer res.Body.Close()
	var d timeline.Doc
	err = json.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&d)
	return d, err
}

// Command implements Source.
func (s HTTPSource) Command(ctx context.Context, op string, req control.Request) (control.Response, error) {
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url("/ui/api/"+op), bytes.NewReader(body))
	if err != nil {
		return control.Response{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if s.Token != "" {
		hr.Header.Set("Authorization", "Bearer "+s.Token)
	}
	res, err := s.Client.Do(hr)
	if err != nil {
		return control.Response{}, err
	}
	defer res.Body.Close()
	var out control.Response
	if err := json.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&out); err != nil {
		return control.Response{}, fmt.Errorf("bad answer (HTTP %d): %w", res.StatusCode, err)
	}
	return out, nil
}

// Logs implements Source. The page's route has no follow: it is polled.
func (s HTTPSource) Logs(ctx context.Context, w io.Writer, name string, follow bool) error {
	var seen []string
	for {
		res, err := s.get(ctx, "/ui/api/logs?tail="+fmt.Sprint(logTail)+"&name="+url.QueryEscape(name))
		if err != nil {
			return err
		}
		b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
		res.Body.Close()
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(b), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		for _, l := range newLines(seen, lines) {
			if _, err := io.WriteString(w, l); err != nil {
				return err
			}
		}
		seen = lines
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// newLines returns the lines of next after the longest suffix of prev
// that next starts with (tails overlap between polls).
func newLines(prev, next []string) []string {
	for k := min(len(prev), len(next)); k > 0; k-- {
		if equal(prev[len(prev)-k:], next[:k]) {
			return next[k:]
		}
	}
	return next
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// Where implements Source.
func (s HTTPSource) Where() string { return s.Base.String() }

// frame is one Server-Sent Event.
type frame struct {
	event string
	data  []byte
}

// readFrames parses an event stream, calling f per frame until r ends.
func readFrames(r io.Reader, f func(frame)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // a status frame of 10,000 processes
	var fr frame
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if fr.event != "" {
				f(fr)
			}
			fr = frame{}
		case bytes.HasPrefix(line, []byte("event: ")):
			fr.event = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			fr.data = append(fr.data, line[len("data: "):]...)
		}
	}
	return sc.Err()
}
