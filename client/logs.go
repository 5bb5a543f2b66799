package client

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/podvisor/podvisor/api"
)

// maxLine bounds one line read from /v1/logs: podvisor splits output at
// 64 KiB, and a prefix comes on top.
const maxLine = 128 << 10

// Logs copies the lines q selects to w as podvisor sends them (text, each
// line prefixed "NAME | " when q.Name is empty), then with q.Follow new
// lines until ctx ends. It needs the control socket.
func (c *Client) Logs(ctx context.Context, w io.Writer, q api.LogsQuery) error {
	body, err := c.socketGet(ctx, "/v1/logs?"+q.Values().Encode())
	if err != nil {
		return err
	}
	defer body.Close()
	if _, err := io.Copy(w, body); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading logs: %w", err)
	}
	return nil
}

// LogLines calls each for every line q selects, with the process that
// wrote it, until the lines end (or, with q.Follow, ctx does) or each
// returns an error, which LogLines returns.
func (c *Client) LogLines(ctx context.Context, q api.LogsQuery, each func(api.LogLine) error) error {
	body, err := c.socketGet(ctx, "/v1/logs?"+q.Values().Encode())
	if err != nil {
		return err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		if err := each(ParseLogLine(q.Name, sc.Text())); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading logs: %w", err)
	}
	return nil
}

// ParseLogLine splits a line of /v1/logs: for one process (name given) the
// line is the output; for every process it is "NAME | output", the name
// padded to the widest. Process names hold no spaces (docs/reference.md),
// so the first " | " ends the name.
func ParseLogLine(name, line string) api.LogLine {
	if name != "" {
		return api.LogLine{Process: name, Line: line}
	}
	head, rest, ok := strings.Cut(line, " | ")
	head = strings.TrimRight(head, " ")
	if !ok || head == "" || strings.ContainsAny(head, " \t") {
		return api.LogLine{Line: line} // podvisor's own note ("podvisor: reading ...")
	}
	return api.LogLine{Process: head, Line: rest}
}
