package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/podvisor/podvisor/api"
)

// Event is one frame of the event stream: Name is status, process, phase,
// reload, resources or overflow, and Data its JSON (schema/openapi.json's
// EventFrame): decode it with the type of api the name says, or with
// Decode.
type Event struct {
	Name string
	Data json.RawMessage
}

// Decode decodes e's data into v (an *api.Status for "status", an
// *api.ProcessEvent for "process", and so on).
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("event %s: %w", e.Name, err)
	}
	return nil
}

// EventStream reads frames until its context ends or Close.
type EventStream struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// Events opens the event stream: the control socket's when there is one,
// else the HTTP port's. The first frame is always a status frame. With
// resources > 0 (at least a second) resource usage comes every resources.
func (c *Client) Events(ctx context.Context, resources time.Duration) (*EventStream, error) {
	body, err := c.EventsBody(ctx, resources)
	if err != nil {
		return nil, err
	}
	return &EventStream{body: body, r: bufio.NewReaderSize(body, 64<<10)}, nil
}

// EventsBody is Events as the raw text/event-stream, for a reader of its
// own (an EventSource-style parser).
func (c *Client) EventsBody(ctx context.Context, resources time.Duration) (io.ReadCloser, error) {
	q := ""
	if resources > 0 {
		q = "?resources=" + url.QueryEscape(resources.String())
	}
	if c.sock != nil {
		return c.socketGet(ctx, "/v1/events"+q)
	}
	if c.web == nil {
		return nil, errNoAddr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr+"/events"+q, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.web.Do(req)
	if err != nil {
		return nil, fmt.Errorf("no podvisor answering at %s: %w", c.addr, dialCause(err))
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, &StatusError{Addr: c.addr, Path: "/events", Code: res.StatusCode, Status: res.Status}
	}
	return res.Body, nil
}

// Next returns the next frame, skipping comments (heartbeats); io.EOF when
// the server ended the stream.
func (s *EventStream) Next() (Event, error) {
	var ev Event
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return Event{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.Name != "" || ev.Data != nil {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"): // a comment
		case strings.HasPrefix(line, "event:"):
			ev.Name = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			ev.Data = append(ev.Data, strings.TrimPrefix(line[len("data:"):], " ")...)
		}
	}
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }

// socketStatus GETs /v1/status from the control socket (the /status
// document, the pod part included); where the socket does not serve it
// (a podvisor before it was added), the status frame that opens its event
// stream (the same document without resource usage).
func (c *Client) socketStatus(ctx context.Context) (api.Status, error) {
	var st api.Status
	if err := c.socketDoc(ctx, "/v1/status", maxStatusBytes, &st); err == nil {
		return st, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := c.Events(ctx, 0)
	if err != nil {
		return api.Status{}, err
	}
	defer s.Close()
	ev, err := s.Next()
	if err != nil {
		return api.Status{}, fmt.Errorf("control socket %s: event stream: %w", c.socket, err)
	}
	if ev.Name != "status" {
		return st, fmt.Errorf("control socket %s: event stream began with %q, not status", c.socket, ev.Name)
	}
	return st, ev.Decode(&st)
}

// ReadEvents reads every frame of a finished stream body (a recorded one,
// or a test's), closing it.
func ReadEvents(body io.ReadCloser) ([]Event, error) {
	s := &EventStream{body: body, r: bufio.NewReader(body)}
	defer s.Close()
	var evs []Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}
