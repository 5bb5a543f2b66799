package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/logs"
)

type cliBackend struct{ tails *logs.Tails }

func (b cliBackend) Command(ctx context.Context, op string, req control.Request) control.Response {
	switch {
	case op == "reload" && req.DryRun:
		return control.Response{OK: true, Plan: []string{"restart web: command changed"}, Generation: 1}
	case op == "reload":
		return control.Response{Error: "invalid config", Errors: []string{"procs.yaml:3:5 processes.web: bad"}}
	case req.Names[0] == "wbe":
		return control.Response{Error: `unknown process "wbe" (did you mean "web"?)`}
	case req.Names[0] == "job":
		return control.Response{Results: []control.Result{{Name: "job", Message: "not running (completed)"}}}
	}
	var rs []control.Result
	for _, n := range req.Names {
		rs = append(rs, control.Result{Name: n, OK: true, Message: op + " done " + req.Signal})
	}
	return control.Response{OK: true, Results: rs}
}

func (b cliBackend) Tail(name string) (*logs.Tail, error) {
	if name != "web" {
		return nil, errors.New(`unknown process "` + name + `"`)
	}
	return b.tails.Get(name), nil
}

func TestOperateCommands(t *testing.T) {
	dir, err := os.MkdirTemp("", "pvcli")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "c.sock")
	ln, err := control.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	tails := logs.NewTails(10, 1<<10)
	for _, l := range []string{"a", "b", "c"} {
		tails.Get("web").Add("stdout", []byte(l), time.Now())
	}
	srv := control.NewServer(cliBackend{tails}, nil)
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	t.Setenv("PODVISOR_CONTROL", sock)

	cases := []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"restart", "web", "db"}, 0, "web: restart done \ndb: restart done \n", ""},
		{[]string{"signal", "web", "hup"}, 0, "web: signal done hup\n", ""},
		{[]string{"stop", "wbe"}, 1, "", `podvisor stop: unknown process "wbe" (did you mean "web"?)` + "\n"},
		{[]string{"stop", "job"}, 1, "", "job: not running (completed)\n"},
		{[]string{"reload", "--dry-run"}, 0, "restart web: command changed\n", ""},
		{[]string{"reload"}, 1, "", "podvisor reload: invalid config\nprocs.yaml:3:5 processes.web: bad\n"},
		{[]string{"logs", "web", "--tail", "2"}, 0, "b\nc\n", ""},
		{[]string{"logs", "--tail=1", "web"}, 0, "c\n", ""},
		{[]string{"logs", "wbe"}, 1, "", "podvisor logs: unknown process \"wbe\"\n"},
		// usage errors never reach the socket
		{[]string{"stop"}, 2, "", "podvisor stop: want at least one process name\n"},
		{[]string{"signal", "web"}, 2, "", "podvisor signal: want NAME SIGNAL, such as: podvisor signal web HUP\n"},
		{[]string{"signal", "web", "SIGNOPE"}, 2, "", "podvisor signal: unknown signal \"SIGNOPE\" (use a name such as HUP, USR1, TERM, or a number)\n"},
		{[]string{"reload", "--dry-run", "extra"}, 2, "", "podvisor reload: --dry-run plans a config reload: it takes no process names\n"},
		{[]string{"logs", "web", "db"}, 2, "", "podvisor logs: want at most one process name (none with --reopen), got 2 (web db)\n"},
		{[]string{"logs", "--reopen", "web"}, 2, "", "podvisor logs: want at most one process name (none with --reopen), got 1 (web)\n"},
		{[]string{"logs", "web", "--since", "yesterday"}, 2, "", "podvisor logs: --since: \"yesterday\" is neither a duration (10m) nor an RFC 3339 time (2026-01-02T15:04:05Z)\n"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := realMain(c.args, &out, &errOut)
		if code != c.code || out.String() != c.out || errOut.String() != c.errOut {
			t.Errorf("podvisor %s: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q",
				strings.Join(c.args, " "), code, out.String(), errOut.String(), c.code, c.out, c.errOut)
		}
	}
}

func TestOperateNoPodvisor(t *testing.T) {
	var out, errOut bytes.Buffer
	code := realMain([]string{"restart", "--control", "/nonexistent/c.sock", "web"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "no podvisor is listening on /nonexistent/c.sock") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestParseInterleaved(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f := fs.Bool("f", false, "")
	n := fs.Int("n", 0, "")
	pos, err := parseInterleaved(fs, []string{"a", "-f", "b", "-n", "3", "--", "-c"})
	if err != nil || !*f || *n != 3 || !reflect.DeepEqual(pos, []string{"a", "b", "-c"}) {
		t.Fatalf("pos %q f %v n %d err %v", pos, *f, *n, err)
	}
}
