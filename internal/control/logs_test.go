package control

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/logs"
)

// logFake is a backend with LogBackend: processes web and db, web's stdout
// going to file (timed says whether its lines carry times).
type logFake struct {
	tails  *logs.Tails
	noTail bool // log.tail: 0
	file   string
	timed  bool
	reopen int
}

func (f *logFake) Command(context.Context, string, Request) Response { return Response{OK: true} }

func (f *logFake) Tail(name string) (*logs.Tail, error) {
	if name != "web" && name != "db" {
		return nil, fmt.Errorf("unknown process %q", name)
	}
	if f.noTail {
		return nil, fmt.Errorf("no output is kept (log.tail is 0)")
	}
	return f.tails.Get(name), nil
}

func (f *logFake) LogNames() []string { return []string{"db", "web"} }

func (f *logFake) LogFile(name string) (string, bool) {
	if name == "web" {
		return f.file, f.timed
	}
	return "", false
}

func (f *logFake) ReopenLogs() int { f.reopen++; return 1 }

func query(t *testing.T, c testClient, q LogsQuery) string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.LogsWith(context.Background(), &buf, q); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestLogsAllProcessesByTime(t *testing.T) {
	fb := &logFake{tails: logs.NewTails(10, 1<<10)}
	c, _ := serve(t, fb)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	web, db := fb.tails.Get("web"), fb.tails.Get("db")
	web.Add("stdout", []byte("web 1"), t0.Add(1*time.Second))
	db.Add("stderr", []byte("db 2 error"), t0.Add(2*time.Second))
	web.Add("stdout", []byte("web 3 error"), t0.Add(3*time.Second))
	db.Add("stdout", []byte("db 4"), t0.Add(4*time.Second))

	cases := []struct {
		q    LogsQuery
		want string
	}{
		{LogsQuery{Tail: -1}, "web | web 1\ndb  | db 2 error\nweb | web 3 error\ndb  | db 4\n"},
		{LogsQuery{Tail: 2}, "web | web 3 error\ndb  | db 4\n"},
		{LogsQuery{Tail: -1, Grep: "err"}, "db  | db 2 error\nweb | web 3 error\n"},
		{LogsQuery{Tail: -1, Since: t0.Add(2 * time.Second), Until: t0.Add(4 * time.Second)}, "db  | db 2 error\nweb | web 3 error\n"},
		{LogsQuery{Name: "db", Tail: -1, Grep: "db [24]"}, "db 2 error\ndb 4\n"},
	}
	for _, tc := range cases {
		if got := query(t, c, tc.q); got != tc.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", tc.q, got, tc.want)
		}
	}
	var buf bytes.Buffer
	if err := c.LogsWith(context.Background(), &buf, LogsQuery{Tail: -1, Grep: "("}); err == nil || !strings.Contains(err.Error(), "bad grep") {
		t.Errorf("bad grep: %v", err)
	}

	// Follow every process: a line of either arrives, prefixed. Only
	// lines from now on, whether added before or after the follower
	// starts.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := net.Pipe()
	done := make(chan error, 1)
	since := time.Now()
	go func() { done <- c.LogsWith(ctx, pw, LogsQuery{Tail: -1, Follow: true, Since: since}); pw.Close() }()
	br := bufio.NewReader(pr)
	pr.SetReadDeadline(time.Now().Add(10 * time.Second))
	db.Add("stdout", []byte("db later"), time.Now())
	if line, err := br.ReadString('\n'); line != "db  | db later\n" {
		t.Fatalf("follow: %q, %v", line, err)
	}
	web.Add("stdout", []byte("web later"), time.Now())
	if line, err := br.ReadString('\n'); line != "web | web later\n" {
		t.Fatalf("follow: %q, %v", line, err)
	}
	cancel()
	go io.Copy(io.Discard, br)
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
}

func TestLogsFromFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web.log")
	content := `{"time":"2026-01-02T03:04:01.000Z","process":"web","stream":"stdout","incarnation":1,"line":"one"}
{"time":"2026-01-02T03:04:02.000Z","process":"web","stream":"stderr","incarnation":1,"line":"two error"}
{"time":"2026-01-02T03:04:03.000Z","process":"web","stream":"stdout","incarnation":2,"line":"three"}
`
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	fb := &logFake{tails: logs.NewTails(10, 1<<10), file: file, timed: true}
	fb.tails.Get("web").Add("stdout", []byte("only in the tail"), time.Now())
	c, _ := serve(t, fb)
	lines := strings.SplitAfter(content, "\n")
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	cases := []struct {
		q    LogsQuery
		want string
	}{
		{LogsQuery{Name: "web", Tail: -1}, content},
		{LogsQuery{Name: "web", Tail: 1}, lines[2]},
		{LogsQuery{Name: "web", Tail: -1, Grep: "error"}, lines[1]},
		{LogsQuery{Name: "web", Tail: -1, Since: t0.Add(2 * time.Second)}, lines[1] + lines[2]},
		{LogsQuery{Name: "web", Tail: -1, Until: t0.Add(2 * time.Second)}, lines[0]},
	}
	for _, tc := range cases {
		if got := query(t, c, tc.q); got != tc.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", tc.q, got, tc.want)
		}
	}
	// A text file without times cannot answer --since: the tail does.
	fb.timed = false
	if got := query(t, c, LogsQuery{Name: "web", Tail: -1, Since: t0}); got != "only in the tail\n" {
		t.Errorf("since on an untimed file: %q", got)
	}

	// Without a tail the file still answers.
	fb.timed, fb.noTail = true, true
	if got := query(t, c, LogsQuery{Name: "web", Tail: 1}); got != lines[2] {
		t.Errorf("no tail: %q", got)
	}
	if err := c.LogsWith(context.Background(), io.Discard, LogsQuery{Name: "db", Tail: 1}); err == nil || !strings.Contains(err.Error(), "log.tail is 0") {
		t.Errorf("no tail, no file: %v", err)
	}

	res, err := c.ReopenLogs(context.Background())
	if err != nil || !res.OK || fb.reopen != 1 || res.Results[0].Message != "reopened 1 log files" {
		t.Errorf("reopen: %+v %v (%d)", res, err, fb.reopen)
	}
}

// `podvisor logs NAME` reads the process's log file as podvisor (root):
// a symlink a process planted at its log path is not read through, and a
// FIFO there does not hold the request (issue 34, items 2 and 5).
func TestLogsFileRefusesPlanted(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, fifo := filepath.Join(dir, "link.log"), filepath.Join(dir, "fifo.log")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	fb := &logFake{tails: logs.NewTails(10, 1<<10), timed: true}
	c, _ := serve(t, fb)
	for _, path := range []string{link, fifo} {
		fb.file = path
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var buf bytes.Buffer
		err := c.LogsWith(ctx, &buf, LogsQuery{Name: "web", Tail: -1})
		cancel()
		if err != nil || strings.Contains(buf.String(), "secret") || !strings.Contains(buf.String(), "refused") {
			t.Errorf("%s: %q, %v; want a refusal", filepath.Base(path), buf.String(), err)
		}
	}
}
