package config

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/podvisor/podvisor/internal/graph"
)

const testFile = "procs.yaml"

// env is a lookupEnv over a fixed map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// configErrors unpacks what Parse and Load return on failure.
func configErrors(t *testing.T, err error) []*Error {
	t.Helper()
	var me *multierror.Error
	if !errors.As(err, &me) {
		t.Fatalf("error is %T, want *multierror.Error: %v", err, err)
	}
	out := make([]*Error, 0, len(me.Errors))
	for _, e := range me.Errors {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("list holds %T, want *Error: %v", e, e)
		}
		out = append(out, ce)
	}
	return out
}

func mustParse(t *testing.T, src string, vars map[string]string) *Config {
	t.Helper()
	cfg, err := Parse(testFile, []byte(src), env(vars))
	if err != nil {
		t.Fatalf("Parse failed:\n%v", err)
	}
	return cfg
}

// errCase is one rejected input and the single error it must produce.
type errCase struct {
	name string
	src  string
	pos  string // file:line:col as printed
	path string
	msg  string // substring of Msg
	hint string // substring of Hint, if set
}

func runErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse(testFile, []byte(tc.src), env(map[string]string{"SET": "value", "EMPTY": ""}))
			if err == nil {
				t.Fatalf("Parse accepted the input: %+v", cfg)
			}
			if cfg != nil {
				t.Errorf("Parse returned a Config along with an error")
			}
			errs := configErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1:\n%v", len(errs), err)
			}
			checkError(t, errs[0], tc)
		})
	}
}

func checkError(t *testing.T, e *Error, tc errCase) {
	t.Helper()
	if got := e.Pos.String(); got != tc.pos {
		t.Errorf("position %s, want %s (%v)", got, tc.pos, e)
	}
	if e.Path != tc.path {
		t.Errorf("path %q, want %q (%v)", e.Path, tc.path, e)
	}
	if !strings.Contains(e.Msg, tc.msg) {
		t.Errorf("message %q does not contain %q", e.Msg, tc.msg)
	}
	if !strings.Contains(e.Hint, tc.hint) {
		t.Errorf("hint %q does not contain %q", e.Hint, tc.hint)
	}
	if s := e.Error(); !strings.HasPrefix(s, tc.pos) || strings.Contains(s, "!!") {
		t.Errorf("formatted error %q: want prefix %q and no YAML tags", s, tc.pos)
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	runErrCases(t, []errCase{
		{name: "empty file", src: "",
			pos: "procs.yaml:1:1", msg: "no configuration: the file is empty"},
		{name: "only comments", src: "# nothing here\n\n",
			pos: "procs.yaml:1:1", msg: "the file is empty"},
		{name: "only a document marker", src: "---\n",
			pos: "procs.yaml:1:1", msg: "the file is empty"},
		{name: "null document", src: "~\n",
			pos: "procs.yaml:1:1", msg: "the file is empty"},
		{name: "non-UTF-8", src: "processes:\n  a:\n    command: \"x\xff\"\n",
			pos: "procs.yaml:3:16", msg: "invalid UTF-8 at byte offset 31"},
		{name: "UTF-16 with BOM", src: "\xff\xfep\x00",
			pos: "procs.yaml:1:1", msg: "invalid UTF-8 at byte offset 0"},
		{name: "NUL byte", src: "processes:\n  a:\x00\n",
			pos: "procs.yaml:2:5", msg: "NUL byte at byte offset 15"},
		{name: "NUL escape", src: "processes:\n  a:\n    command: \"a\\0b\"\n",
			pos: "procs.yaml:3:14", path: "processes.a.command", msg: "contains a NUL character"},
		{name: "YAML syntax", src: "processes:\n  a: {command: x}\n  b: c: d\n",
			pos: "procs.yaml:3", msg: "invalid YAML: mapping values are not allowed in this context"},
		{name: "tab indentation", src: "processes:\n\ta:\n",
			pos: "procs.yaml:2", msg: "invalid YAML"},
		{name: "two documents", src: "processes:\n  a: {command: x}\n---\nprocesses: {}\n",
			pos: "procs.yaml:4:1", msg: "more than one YAML document"},
		{name: "anchor and alias", src: "processes:\n  a: &cmd {command: x}\n  b: *cmd\n",
			pos: "procs.yaml:2:6", msg: "anchors and aliases are not supported (2 found)", hint: "huge"},
		{name: "secret_env not a list", src: "processes:\n  a: {command: x, secret_env: TOKEN}\n",
			pos: "procs.yaml:2:31", path: "processes.a.secret_env", msg: "expected a list of variable names"},
		{name: "secret_env bad name", src: "processes:\n  a: {command: x, secret_env: [OK, 1BAD]}\n",
			pos: "procs.yaml:2:36", path: "processes.a.secret_env", msg: `"1BAD" is not a variable name`},
		{name: "top level list", src: "- processes\n",
			pos: "procs.yaml:1:1", msg: "expected a mapping, got a list"},
		{name: "list where a map belongs", src: "processes:\n  - a\n  - b\n",
			pos: "procs.yaml:2:3", path: "processes", msg: "expected a mapping, got a list"},
		{name: "process is a string", src: "processes:\n  a: sleep 1\n",
			pos: "procs.yaml:2:6", path: "processes.a", msg: "expected a mapping, got a string"},
		{name: "no processes key", src: "version: 1\n",
			pos: "procs.yaml:1:1", msg: "no processes defined"},
		{name: "zero processes", src: "processes: {}\n",
			pos: "procs.yaml:1:12", path: "processes", msg: "no processes defined"},
		{name: "unknown top-level key", src: "lisen: \":1\"\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:1", msg: `unknown key "lisen"`, hint: `did you mean "listen"?`},
		{name: "unknown process key", src: "processes:\n  a:\n    command: x\n    depend_on: [b]\n  b: {command: x}\n",
			pos: "procs.yaml:4:5", path: "processes.a", msg: `unknown key "depend_on"`, hint: `did you mean "depends_on"?`},
		{name: "unknown key without suggestion", src: "processes:\n  a: {command: x, zzzzzz: 1}\n",
			pos: "procs.yaml:2:19", path: "processes.a", msg: `unknown key "zzzzzz"`, hint: "valid keys: command, type,"},
		{name: "duplicate process", src: "processes:\n  web: {command: x}\n  db: {command: y}\n  web: {command: z}\n",
			pos: "procs.yaml:4:3", path: "processes", msg: `duplicate key "web" (first defined at line 2)`},
		{name: "names differing in case", src: "processes:\n  web: {command: x}\n  Web: {command: y}\n",
			pos: "procs.yaml:3:3", path: "processes", msg: `"Web" differs from "web" (line 2) only in case`},
		{name: "name with slash", src: "processes:\n  ../etc: {command: x}\n",
			pos: "procs.yaml:2:3", path: "processes", msg: `invalid process name "../etc"`},
		{name: "name with leading dash", src: "processes:\n  -x: {command: x}\n",
			pos: "procs.yaml:2:3", path: "processes", msg: `invalid process name "-x"`},
		{name: "name with space", src: "processes:\n  \"web \": {command: x}\n",
			pos: "procs.yaml:2:3", path: "processes", msg: `invalid process name "web "`},
		{name: "name too long", src: "processes:\n  " + strings.Repeat("a", 64) + ": {command: x}\n",
			pos: "procs.yaml:2:3", path: "processes", msg: "invalid process name"},
		{name: "version 2", src: "version: 2\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:10", path: "version", msg: `unsupported version "2"`},
		{name: "missing command", src: "processes:\n  a: {type: oneshot}\n",
			pos: "procs.yaml:2:3", path: "processes.a", msg: "command is required"},
		{name: "empty command string", src: "processes:\n  a: {command: \"  \"}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "command is empty"},
		{name: "empty command list", src: "processes:\n  a: {command: []}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "command is empty"},
		{name: "empty argv[0]", src: "processes:\n  a: {command: [\"\", x]}\n",
			pos: "procs.yaml:2:17", path: "processes.a.command[0]", msg: "program name is empty"},
		{name: "command is a number", src: "processes:\n  a: {command: 5}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "expected a string or a list of strings, got a number"},
		{name: "command list holds a map", src: "processes:\n  a: {command: [x, {y: z}]}\n",
			pos: "procs.yaml:2:20", path: "processes.a.command[1]", msg: "expected a string, got a mapping"},
		{name: "unknown type", src: "processes:\n  a: {command: x, type: daemon}\n",
			pos: "procs.yaml:2:25", path: "processes.a.type", msg: `unknown type "daemon"`, hint: "valid: service, oneshot, job"},
		{name: "restart sometimes", src: "processes:\n  a: {command: x, restart: sometimes}\n",
			pos: "procs.yaml:2:28", path: "processes.a.restart", msg: `unknown restart policy "sometimes"`, hint: "valid: always, on-failure, never"},
		{name: "restart typo", src: "processes:\n  a: {command: x, restart: alway}\n",
			pos: "procs.yaml:2:28", path: "processes.a.restart", msg: `unknown restart policy "alway"`, hint: `did you mean "always"?`},
		{name: "restart always on oneshot", src: "processes:\n  a: {command: x, type: oneshot, restart: always}\n",
			pos: "procs.yaml:2:43", path: "processes.a.restart", msg: "always is only for services", hint: "on-failure"},
		{name: "restart limit negative", src: "processes:\n  a: {command: x, restart: {limit: -1}}\n",
			pos: "procs.yaml:2:36", path: "processes.a.restart.limit", msg: "limit must not be negative"},
		{name: "restart backoff zero", src: "processes:\n  a: {command: x, restart: {backoff: 0s}}\n",
			pos: "procs.yaml:2:38", path: "processes.a.restart.backoff", msg: "must be greater than 0"},
		{name: "max_backoff below backoff", src: "processes:\n  a: {command: x, restart: {backoff: 1m, max_backoff: 10s}}\n",
			pos: "procs.yaml:2:55", path: "processes.a.restart.max_backoff", msg: "max_backoff 10s is less than backoff 1m"},
		{name: "restart is a list", src: "processes:\n  a: {command: x, restart: [always]}\n",
			pos: "procs.yaml:2:28", path: "processes.a.restart", msg: "expected a mapping, got a list"},
		{name: "duration without unit", src: "processes:\n  a: {command: x, start_timeout: 10}\n",
			pos: "procs.yaml:2:34", path: "processes.a.start_timeout", msg: "duration 10 is missing a unit", hint: "e.g. 10s"},
		{name: "quoted duration without unit", src: "shutdown_timeout: \"10\"\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:19", path: "shutdown_timeout", msg: "missing a unit"},
		{name: "fractional duration without unit", src: "processes:\n  a: {command: x, stop: {timeout: 0.5}}\n",
			pos: "procs.yaml:2:35", path: "processes.a.stop.timeout", msg: "duration 0.5 is missing a unit"},
		{name: "negative duration", src: "processes:\n  a: {command: x, start_timeout: -1s}\n",
			pos: "procs.yaml:2:34", path: "processes.a.start_timeout", msg: "duration -1s is negative"},
		{name: "unknown duration unit", src: "processes:\n  a: {command: x, start_timeout: 1y}\n",
			pos: "procs.yaml:2:34", path: "processes.a.start_timeout", msg: `invalid duration "1y"`, hint: "ns, us, ms, s, m or h"},
		{name: "overflowing duration", src: "processes:\n  a: {command: x, start_timeout: 99999999999h}\n",
			pos: "procs.yaml:2:34", path: "processes.a.start_timeout", msg: "too large", hint: "at most 24h"},
		{name: "duration above cap", src: "processes:\n  a: {command: x, start_timeout: 25h}\n",
			pos: "procs.yaml:2:34", path: "processes.a.start_timeout", msg: "duration 25h is too large", hint: "at most 24h"},
		{name: "zero shutdown_timeout", src: "shutdown_timeout: 0s\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:19", path: "shutdown_timeout", msg: "must be greater than 0"},
		{name: "duration is a map", src: "shutdown_timeout: {s: 1}\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:19", path: "shutdown_timeout", msg: "expected a duration such as 10s, got a mapping"},
		{name: "signal SIGFOO", src: "processes:\n  a: {command: x, stop: {signal: SIGFOO}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.stop.signal", msg: `unknown signal "SIGFOO"`, hint: "valid: SIGTERM, SIGINT, SIGQUIT"},
		{name: "signal typo", src: "processes:\n  a: {command: x, stop: {signal: SIGTREM}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.stop.signal", msg: `unknown signal "SIGTREM"`, hint: `did you mean "SIGTERM"?`},
		{name: "signal SIGKILL", src: "processes:\n  a: {command: x, stop: {signal: KILL}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.stop.signal", msg: "SIGKILL cannot be a stop signal", hint: "stop.timeout: 0s"},
		{name: "signal SIGSTOP", src: "processes:\n  a: {command: x, stop: {signal: SIGSTOP}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.stop.signal", msg: "SIGSTOP cannot be a stop signal"},
		{name: "signal number", src: "processes:\n  a: {command: x, stop: {signal: \"15\"}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.stop.signal", msg: "signal numbers are not accepted"},
		{name: "unknown stop key", src: "processes:\n  a: {command: x, stop: {grace: 1s}}\n",
			pos: "procs.yaml:2:26", path: "processes.a.stop", msg: `unknown key "grace"`},
		{name: "exit code above 255", src: "processes:\n  a: {command: x, success_exit_codes: [0, 256]}\n",
			pos: "procs.yaml:2:43", path: "processes.a.success_exit_codes[1]", msg: "exit code 256 is out of range 0-255"},
		{name: "exit code negative", src: "processes:\n  a: {command: x, success_exit_codes: [-1]}\n",
			pos: "procs.yaml:2:40", path: "processes.a.success_exit_codes[0]", msg: "out of range 0-255"},
		{name: "exit codes empty", src: "processes:\n  a: {command: x, success_exit_codes: []}\n",
			pos: "procs.yaml:2:39", path: "processes.a.success_exit_codes", msg: "at least one exit code"},
		{name: "exit code is a string", src: "processes:\n  a: {command: x, success_exit_codes: [\"0\"]}\n",
			pos: "procs.yaml:2:40", path: "processes.a.success_exit_codes[0]", msg: "expected a whole number, got a string"},
		{name: "unknown dependency", src: "processes:\n  db: {command: x}\n  app:\n    command: x\n    depends_on: [dbb]\n",
			pos: "procs.yaml:5:18", path: "processes.app.depends_on", msg: `unknown process "dbb"`, hint: `did you mean "db"?`},
		{name: "self dependency", src: "processes:\n  a:\n    command: x\n    depends_on: [a]\n",
			pos: "procs.yaml:4:18", path: "processes.a.depends_on", msg: `process "a" depends on itself`},
		{name: "self dependency map form", src: "processes:\n  a:\n    command: x\n    depends_on: {a: started}\n",
			pos: "procs.yaml:4:18", path: "processes.a.depends_on", msg: `process "a" depends on itself`},
		{name: "dependency listed twice", src: "processes:\n  a: {command: x}\n  b: {command: x, depends_on: [a, a]}\n",
			pos: "procs.yaml:3:35", path: "processes.b.depends_on", msg: `"a" is listed more than once (first at line 3)`},
		{name: "depends_on is a string", src: "processes:\n  a: {command: x}\n  b: {command: x, depends_on: a}\n",
			pos: "procs.yaml:3:31", path: "processes.b.depends_on", msg: "expected a list of process names or a mapping of name to condition, got a string"},
		{name: "completed on a service", src: "processes:\n  db: {command: x}\n  app:\n    command: x\n    depends_on: {db: completed}\n",
			pos: "procs.yaml:5:18", path: "processes.app.depends_on", msg: `condition completed needs a oneshot or job, but "db" is a service`},
		{name: "unknown condition", src: "processes:\n  db: {command: x}\n  app: {command: x, depends_on: {db: healthy}}\n",
			pos: "procs.yaml:3:38", path: "processes.app.depends_on.db", msg: `unknown condition "healthy"`, hint: "valid: started, ready, completed"},
		{name: "unknown dependency key", src: "processes:\n  db: {command: x}\n  app: {command: x, depends_on: {db: {condition: ready, restrat: true}}}\n",
			pos: "procs.yaml:3:57", path: "processes.app.depends_on.db", msg: `unknown key "restrat"`, hint: `did you mean "restart"?`},
		{name: "dependency restart not a bool", src: "processes:\n  db: {command: x}\n  app: {command: x, depends_on: {db: {restart: sometimes}}}\n",
			pos: "procs.yaml:3:48", path: "processes.app.depends_on.db.restart", msg: "expected true or false, got a string"},
		{name: "two-process cycle", src: "processes:\n  a: {command: x, depends_on: [b]}\n  b: {command: x, depends_on: [a]}\n",
			pos: "procs.yaml:2:32", path: "processes.a.depends_on", msg: "dependency cycle: a -> b -> a"},
		{name: "probe without kind", src: "processes:\n  a: {command: x, ready: {timeout: 1s}}\n",
			pos: "procs.yaml:2:26", path: "processes.a.ready", msg: "no check given", hint: "http, tcp, grpc, exec, file, log, notify"},
		{name: "probe with two kinds", src: "processes:\n  a:\n    command: x\n    ready:\n      http: http://localhost/\n      tcp: localhost:80\n",
			pos: "procs.yaml:6:7", path: "processes.a.ready", msg: "both http and tcp given"},
		{name: "http probe with ftp", src: "processes:\n  a: {command: x, ready: {http: \"ftp://h/\"}}\n",
			pos: "procs.yaml:2:33", path: "processes.a.ready.http", msg: "must start with http:// or https://"},
		{name: "http probe without host", src: "processes:\n  a: {command: x, ready: {http: \"http:///x\"}}\n",
			pos: "procs.yaml:2:33", path: "processes.a.ready.http", msg: "no host"},
		{name: "http probe bad port", src: "processes:\n  a: {command: x, ready: {http: \"http://h:0/\"}}\n",
			pos: "procs.yaml:2:33", path: "processes.a.ready.http", msg: "port 0 is out of range"},
		{name: "tcp probe port 0", src: "processes:\n  a: {command: x, ready: {tcp: \"127.0.0.1:0\"}}\n",
			pos: "procs.yaml:2:32", path: "processes.a.ready.tcp", msg: "port 0 is out of range 1-65535"},
		{name: "tcp probe port 70000", src: "processes:\n  a: {command: x, ready: {tcp: \"127.0.0.1:70000\"}}\n",
			pos: "procs.yaml:2:32", path: "processes.a.ready.tcp", msg: "port 70000 is out of range 1-65535"},
		{name: "tcp probe without port", src: "processes:\n  a: {command: x, ready: {tcp: localhost}}\n",
			pos: "procs.yaml:2:32", path: "processes.a.ready.tcp", msg: `invalid tcp check "localhost": missing port in address`},
		{name: "tcp probe named port", src: "processes:\n  a: {command: x, ready: {tcp: \"h:http\"}}\n",
			pos: "procs.yaml:2:32", path: "processes.a.ready.tcp", msg: `port "http" is not a number`},
		{name: "log probe bad regex", src: "processes:\n  a: {command: x, ready: {log: \"ready(\"}}\n",
			pos: "procs.yaml:2:32", path: "processes.a.ready.log", msg: "invalid regular expression: missing closing )"},
		{name: "log probe empty", src: "processes:\n  a: {command: x, ready: {log: \"\"}}\n",
			pos: "procs.yaml:2:32", path: "processes.a.ready.log", msg: "log pattern is empty"},
		{name: "notify fd 2", src: "processes:\n  a: {command: x, ready: {notify: \"fd:2\"}}\n",
			pos: "procs.yaml:2:35", path: "processes.a.ready.notify", msg: "notify fd 2 is out of range 3-1023"},
		{name: "notify unknown", src: "processes:\n  a: {command: x, ready: {notify: sd}}\n",
			pos: "procs.yaml:2:35", path: "processes.a.ready.notify", msg: `invalid notify "sd"`, hint: "systemd"},
		{name: "exec probe empty", src: "processes:\n  a: {command: x, ready: {exec: []}}\n",
			pos: "procs.yaml:2:33", path: "processes.a.ready.exec", msg: "command is empty"},
		{name: "file probe empty", src: "processes:\n  a: {command: x, ready: {file: \"\"}}\n",
			pos: "procs.yaml:2:33", path: "processes.a.ready.file", msg: "path is empty"},
		{name: "live with log", src: "processes:\n  a: {command: x, live: {log: ok}}\n",
			pos: "procs.yaml:2:26", path: "processes.a.live", msg: "live cannot use log", hint: "http, tcp, grpc, exec, file"},
		{name: "live with notify", src: "processes:\n  a: {command: x, live: {notify: systemd}}\n",
			pos: "procs.yaml:2:26", path: "processes.a.live", msg: "live cannot use notify"},
		{name: "startup with log", src: "processes:\n  a: {command: x, type: job, startup: {log: ok}}\n",
			pos: "procs.yaml:2:40", path: "processes.a.startup", msg: "startup cannot use log", hint: "http, tcp, grpc, exec, file"},
		{name: "while_stopping on live", src: "processes:\n  a: {command: x, live: {tcp: \"h:1\", while_stopping: true}}\n",
			pos: "procs.yaml:2:38", path: "processes.a.live", msg: "unknown key \"while_stopping\""},
		{name: "while_stopping not a boolean", src: "processes:\n  a: {command: x, ready: {tcp: \"h:1\", while_stopping: 1}}\n",
			pos: "procs.yaml:2:55", path: "processes.a.ready.while_stopping", msg: "expected true or false"},
		{name: "threshold zero", src: "processes:\n  a: {command: x, ready: {tcp: \"h:1\", success_threshold: 0}}\n",
			pos: "procs.yaml:2:58", path: "processes.a.ready.success_threshold", msg: "threshold must be at least 1"},
		{name: "probe timeout zero", src: "processes:\n  a: {command: x, ready: {tcp: \"h:1\", timeout: 0s}}\n",
			pos: "procs.yaml:2:48", path: "processes.a.ready.timeout", msg: "must be greater than 0"},
		{name: "probe interval zero", src: "processes:\n  a: {command: x, live: {tcp: \"h:1\", interval: 0s}}\n",
			pos: "procs.yaml:2:48", path: "processes.a.live.interval", msg: "must be greater than 0"},
		{name: "unknown user", src: "processes:\n  a: {command: x, user: no-such-user-podvisor}\n",
			pos: "procs.yaml:2:25", path: "processes.a.user", msg: `unknown user "no-such-user-podvisor"`},
		{name: "unknown group", src: "processes:\n  a: {command: x, user: \"0:no-such-group-podvisor\"}\n",
			pos: "procs.yaml:2:25", path: "processes.a.user", msg: `unknown group "no-such-group-podvisor"`},
		{name: "uid -1", src: "processes:\n  a: {command: x, user: 4294967295}\n",
			pos: "procs.yaml:2:25", path: "processes.a.user", msg: "invalid uid 4294967295"},
		{name: "listen without port", src: "listen: localhost\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:9", path: "listen", msg: `invalid listen address "localhost"`, hint: `"off"`},
		{name: "listen is a number", src: "listen: 9464\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:9", path: "listen", msg: "expected a string, got a number"},
		{name: "log format yaml", src: "log: {format: yaml}\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:15", path: "log.format", msg: `unknown log format "yaml"`, hint: "valid: text, json"},
		{name: "log timestamps not bool", src: "log: {timestamps: yes}\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:19", path: "log.timestamps", msg: "expected true or false, got a string"},
		{name: "env is a list", src: "processes:\n  a: {command: x, env: [A=1]}\n",
			pos: "procs.yaml:2:24", path: "processes.a.env", msg: "expected a mapping, got a list"},
		{name: "env invalid name", src: "env: {\"1A\": x}\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:7", path: "env", msg: `invalid variable name "1A"`},
		{name: "env empty value", src: "processes:\n  a: {command: x, env: {A: }}\n",
			pos: "procs.yaml:2:28", path: "processes.a.env.A", msg: "expected a string, got an empty value"},
		{name: "unset variable", src: "processes:\n  a: {command: \"run ${NOPE}\"}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "variable NOPE is not set", hint: ""},
		{name: "unset variable set by env:", src: "processes:\n  a: {command: \"echo ${PORT}\", env: {PORT: \"8080\"}}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "variable PORT is not set",
			hint: "${PORT} reads podvisor's own environment as the config loads, not env:; give a default with ${PORT:-value}, or write $$PORT in a command string: the shell then expands the process's own PORT, env: included"},
		{name: "unset variable in env", src: "env: {A: \"${NOPE}\"}\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:10", path: "env.A", msg: "variable NOPE is not set"},
		{name: "unset variable in probe", src: "processes:\n  a: {command: x, ready: {http: \"http://${NOPE}/\"}}\n",
			pos: "procs.yaml:2:33", path: "processes.a.ready.http", msg: "variable NOPE is not set"},
		{name: "unterminated variable", src: "processes:\n  a: {command: \"${SET\"}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "unterminated ${"},
		{name: "interpolation empties argv[0]", src: "processes:\n  a: {command: [\"${EMPTY}\"]}\n",
			pos: "procs.yaml:2:17", path: "processes.a.command[0]", msg: "program name is empty"},
		{name: "missing env_file", src: "processes:\n  a: {command: x, env_file: testdata/no-such.env}\n",
			pos: "procs.yaml:2:29", path: "processes.a.env_file", msg: "testdata/no-such.env: cannot open: no such file or directory"},
		{name: "env_file is a directory", src: "processes:\n  a: {command: x, env_file: [testdata]}\n",
			pos: "procs.yaml:2:30", path: "processes.a.env_file", msg: "testdata: is a directory, not a regular file"},
		{name: "bad line in env_file", src: "processes:\n  a: {command: x, env_file: testdata/bad.env}\n",
			pos: "procs.yaml:2:29", path: "processes.a.env_file", msg: `testdata/bad.env:3:1: invalid variable name "1BAD"`},
		{name: "custom tag", src: "processes:\n  a: {command: !env FOO}\n",
			pos: "procs.yaml:2:16", path: "processes.a.command", msg: "expected a string or a list of strings, got a value tagged !env"},
	})
}

// TestLoadRejectsFiles covers what Load refuses before parsing. Each case
// must fail fast and name the file.
func TestLoadRejectsFiles(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")

	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}

	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 100 MB of size without 100 MB of disk or of reading.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	loop := filepath.Join(dir, "loop.yaml")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, path, msg string
	}{
		{"missing file", missing, "cannot open: no such file or directory"},
		{"directory", dir, "is a directory, not a regular file"},
		{"named pipe without writer", fifo, "is a named pipe, not a regular file"},
		{"100 MB file", huge, "file is 104857600 bytes, larger than the limit of 1048576 bytes"},
		{"symlink loop", loop, "cannot open: too many levels of symbolic links"},
		{"device", "/dev/zero", "is a device, not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			cfg, err := Load(tc.path, nil)
			if err == nil {
				t.Fatalf("Load accepted %s: %+v", tc.path, cfg)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Load took %v", d)
			}
			errs := configErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1: %v", len(errs), err)
			}
			want := tc.path + ": " + tc.msg
			if got := errs[0].Error(); !strings.HasPrefix(got, want) {
				t.Errorf("error %q, want prefix %q", got, want)
			}
		})
	}

	t.Run("missing file hint and cause", func(t *testing.T) {
		_, err := Load(missing, nil)
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("errors.Is(err, os.ErrNotExist) = false for %v", err)
		}
		if e := configErrors(t, err)[0]; !strings.Contains(e.Hint, "PODVISOR_CONFIG") {
			t.Errorf("hint %q does not mention PODVISOR_CONFIG", e.Hint)
		}
	})

	t.Run("unreadable file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their mode")
		}
		p := filepath.Join(dir, "secret.yaml")
		if err := os.WriteFile(p, []byte("processes: {a: {command: x}}\n"), 0o000); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, nil)
		if err == nil || !strings.Contains(err.Error(), p+": cannot open: permission denied") {
			t.Errorf("got %v", err)
		}
	})

	t.Run("billion laughs", func(t *testing.T) {
		_, err := Load("testdata/billion-laughs.yaml", nil)
		errs := configErrors(t, err)
		if len(errs) != 1 {
			t.Fatalf("got %d errors: %v", len(errs), err)
		}
		checkError(t, errs[0], errCase{pos: "testdata/billion-laughs.yaml:3:4",
			msg: "anchors and aliases are not supported"})
	})
}

func TestLoadSetsDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "procs.yaml")
	src := "processes:\n  a:\n    command: x\n    working_dir: sub\n    ready: {file: run/ready}\n  b: {command: x, working_dir: /srv, ready: {file: /tmp/r}}\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dir != dir || cfg.File != p {
		t.Errorf("Dir %q File %q, want %q %q", cfg.Dir, cfg.File, dir, p)
	}
	a, b := cfg.Processes["a"], cfg.Processes["b"]
	if want := filepath.Join(dir, "sub"); a.WorkingDir != want {
		t.Errorf("a.WorkingDir %q, want %q", a.WorkingDir, want)
	}
	if want := filepath.Join(dir, "run/ready"); a.Ready.Target != want {
		t.Errorf("a.Ready.Target %q, want %q", a.Ready.Target, want)
	}
	if b.WorkingDir != "/srv" || b.Ready.Target != "/tmp/r" {
		t.Errorf("absolute paths changed: %q %q", b.WorkingDir, b.Ready.Target)
	}

	// A relative config path gives an absolute Dir too.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cfg = mustParse(t, "processes: {a: {command: x}}\n", nil)
	if cfg.Dir != wd || cfg.Processes["a"].WorkingDir != wd {
		t.Errorf("Dir %q WorkingDir %q, want %q", cfg.Dir, cfg.Processes["a"].WorkingDir, wd)
	}
}

// TestAllErrorsAtOnce checks that independent problems are all reported,
// sorted by position, one per line, each starting with the file name.
func TestAllErrorsAtOnce(t *testing.T) {
	src := `processes:
  web:
    command: [nginx]
    depends_on: [cache, dbb]
    restart: sometimes
  cache:
    command: redis
    stop: {signal: SIGFOO, timeout: 10}
  db:
    comand: postgres
shutdown_timeout: -1s
`
	_, err := Parse(testFile, []byte(src), nil)
	if err == nil {
		t.Fatal("Parse accepted the input")
	}
	want := []string{
		`procs.yaml:4:25 processes.web.depends_on: unknown process "dbb" (did you mean "db"?)`,
		`procs.yaml:5:14 processes.web.restart: unknown restart policy "sometimes" (valid: always, on-failure, never)`,
		`procs.yaml:8:20 processes.cache.stop.signal: unknown signal "SIGFOO" (valid: SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGABRT, SIGALRM)`,
		`procs.yaml:8:37 processes.cache.stop.timeout: duration 10 is missing a unit (e.g. 10s)`,
		`procs.yaml:9:3 processes.db: command is required`,
		`procs.yaml:10:5 processes.db: unknown key "comand" (did you mean "command"?)`,
		`procs.yaml:11:19 shutdown_timeout: duration -1s is negative`,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(configErrors(t, err)); n != len(want) {
		t.Errorf("%d errors in the list, want %d", n, len(want))
	}
}

// TestCycleAmongMany hides a 3-cycle in 500 processes and checks that it
// is reported exactly, alone, at the edge that starts it.
func TestCycleAmongMany(t *testing.T) {
	var b strings.Builder
	b.WriteString("processes:\n")
	for i := range 500 {
		fmt.Fprintf(&b, "  p%03d:\n    command: [run]\n", i)
		switch i {
		case 0:
		case 100:
			b.WriteString("    depends_on: [p099, p200]\n")
		case 200:
			b.WriteString("    depends_on: [p300]\n")
		case 300:
			b.WriteString("    depends_on: [p100, p299]\n")
		default:
			fmt.Fprintf(&b, "    depends_on: [p%03d]\n", i-1)
		}
	}
	_, err := Parse(testFile, []byte(b.String()), nil)
	if err == nil {
		t.Fatal("Parse accepted a cycle")
	}
	// Line 1 is "processes:", p000 takes 2 lines, every other process 3,
	// so p100's depends_on is on line 3*100+3; p200 is at column 24.
	want := fmt.Sprintf("procs.yaml:%d:24 processes.p100.depends_on: dependency cycle: p100 -> p200 -> p300 -> p100", 3*100+3)
	if got := err.Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDefaults(t *testing.T) {
	cfg := mustParse(t, `processes:
  svc: {command: [server]}
  init: {command: "setup", type: oneshot}
  work: {command: [work], type: job, ready: {exec: check}, live: {tcp: "h:1"}}
`, nil)
	if cfg.Listen != ":9464" || cfg.ShutdownTimeout != 30*time.Second || cfg.Log != (Log{Format: "text", Tail: DefaultLogTail, Default: defaultOutput()}) || cfg.Env != nil {
		t.Errorf("global defaults: listen %q shutdown %v log %+v env %v", cfg.Listen, cfg.ShutdownTimeout, cfg.Log, cfg.Env)
	}
	if want := []string{"init", "svc", "work"}; !reflect.DeepEqual(cfg.Names, want) {
		t.Errorf("Names %v, want %v", cfg.Names, want)
	}
	wd, _ := os.Getwd()
	for _, name := range cfg.Names {
		p := cfg.Processes[name]
		if p.Name != name || p.WorkingDir != wd || p.User != nil || p.Env != nil || p.DependsOn != nil || p.StartTimeout != 0 {
			t.Errorf("%s: %+v", name, p)
		}
		if !reflect.DeepEqual(p.SuccessExitCodes, []int{0}) || !p.IsSuccess(0) || p.IsSuccess(1) {
			t.Errorf("%s: success exit codes %v", name, p.SuccessExitCodes)
		}
		if want := (Stop{Signal: syscall.SIGTERM, Timeout: 10 * time.Second}); !reflect.DeepEqual(p.Stop, want) {
			t.Errorf("%s: stop %+v, want %+v", name, p.Stop, want)
		}
	}
	svc, init, work := cfg.Processes["svc"], cfg.Processes["init"], cfg.Processes["work"]
	if svc.Type != Service || init.Type != Oneshot || work.Type != Job {
		t.Errorf("types %v %v %v", svc.Type, init.Type, work.Type)
	}
	if want := (Restart{Policy: Always, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second}); !reflect.DeepEqual(svc.Restart, want) {
		t.Errorf("service restart %+v, want %+v", svc.Restart, want)
	}
	if want := (Restart{Policy: Never, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second}); !reflect.DeepEqual(init.Restart, want) || !reflect.DeepEqual(work.Restart, want) {
		t.Errorf("oneshot/job restart %+v %+v, want %+v", init.Restart, work.Restart, want)
	}
	if !init.Shell || !reflect.DeepEqual(init.Command, []string{"/bin/sh", "-c", "setup"}) || svc.Shell {
		t.Errorf("command forms: %v %v / %v %v", init.Command, init.Shell, svc.Command, svc.Shell)
	}
	if svc.Ready != nil || svc.Live != nil {
		t.Errorf("service without probes has %+v %+v", svc.Ready, svc.Live)
	}
	timing := Probe{StartInterval: 100 * time.Millisecond, Interval: 10 * time.Second, Timeout: time.Second,
		SuccessThreshold: 1, FailureThreshold: 3}
	wantReady := timing
	wantReady.Kind, wantReady.Command, wantReady.Shell = ProbeExec, []string{"/bin/sh", "-c", "check"}, true
	if !reflect.DeepEqual(*work.Ready, wantReady) {
		t.Errorf("ready %+v, want %+v", *work.Ready, wantReady)
	}
	wantLive := timing
	wantLive.Kind, wantLive.Target = ProbeTCP, "h:1"
	if !reflect.DeepEqual(*work.Live, wantLive) {
		t.Errorf("live %+v, want %+v", *work.Live, wantLive)
	}
	if cfg.Graph == nil || cfg.Graph.Len() != 3 {
		t.Errorf("graph not built")
	}
}

// TestFullConfig sets every key and checks where each value lands.
func TestFullConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.env"), []byte("FROM_FILE=1\nSHARED=file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `version: 1
listen: "127.0.0.1:0"
shutdown_timeout: 1m
log: {format: json, timestamps: true}
env:
  TZ: UTC
  SHARED: global
processes:
  migrate:
    command: [migrate, up]
    type: oneshot
    restart: on-failure
  cache:
    command: redis-server
    ready: {tcp: "127.0.0.1:6379", start_interval: 50ms, interval: 5s, timeout: 2s, initial_delay: 1s, success_threshold: 2, failure_threshold: 5}
  app:
    command: ["${BIN:-/usr/bin/app}", --port, 8080, "$$HOME"]
    env_file: app.env
    env: {SHARED: process, PORT: 8080}
    working_dir: ${WORK}
    user: "0:0"
    depends_on:
      migrate: completed
      cache: {condition: started, restart: true}
    ready:
      http: http://127.0.0.1:8080/healthz
    start_timeout: 90s
    live:
      exec: [pgrep, app]
    restart: {policy: on-failure, backoff: 1s, max_backoff: 1m, limit: 3}
    success_exit_codes: [0, 143]
    stop:
      signal: quit
      timeout: 0s
      command: "kill -QUIT 1"
  notifier:
    command: x
    ready: {notify: "fd:3"}
    live: {file: alive}
  logger:
    command: x
    ready: {log: "^ready on port \\d+$"}
  sd:
    command: x
    ready: {notify: systemd}
`
	cfg, err := Parse(filepath.Join(dir, "procs.yaml"), []byte(src), env(map[string]string{"WORK": "/work"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:0" || cfg.ShutdownTimeout != time.Minute || cfg.Log.Format != "json" || !cfg.Log.Timestamps || cfg.Log.Tail != DefaultLogTail {
		t.Errorf("globals: %q %v %+v", cfg.Listen, cfg.ShutdownTimeout, cfg.Log)
	}
	if want := []string{"TZ=UTC", "SHARED=global"}; !reflect.DeepEqual(cfg.Env, want) {
		t.Errorf("global env %v, want %v", cfg.Env, want)
	}
	app := cfg.Processes["app"]
	if want := []string{"/usr/bin/app", "--port", "8080", "$HOME"}; !reflect.DeepEqual(app.Command, want) {
		t.Errorf("command %q, want %q", app.Command, want)
	}
	if want := []string{"TZ=UTC", "SHARED=process", "FROM_FILE=1", "PORT=8080"}; !reflect.DeepEqual(app.Env, want) {
		t.Errorf("env %v, want %v", app.Env, want)
	}
	if app.WorkingDir != "/work" {
		t.Errorf("working_dir %q", app.WorkingDir)
	}
	if app.User == nil || app.User.UID != 0 || app.User.GID != 0 || app.User.Spec != "0:0" {
		t.Errorf("user %+v", app.User)
	}
	wantDeps := []Dependency{
		{Name: "cache", Condition: graph.Started, Restart: true, Pos: Pos{cfg.File, 24, 7}},
		{Name: "migrate", Condition: graph.Completed, Pos: Pos{cfg.File, 23, 7}},
	}
	if !reflect.DeepEqual(app.DependsOn, wantDeps) {
		t.Errorf("depends_on %+v, want %+v", app.DependsOn, wantDeps)
	}
	if app.Ready.Kind != ProbeHTTP || app.Ready.Target != "http://127.0.0.1:8080/healthz" {
		t.Errorf("ready %+v", app.Ready)
	}
	if app.StartTimeout != 90*time.Second {
		t.Errorf("start_timeout %v", app.StartTimeout)
	}
	if app.Live.Kind != ProbeExec || !reflect.DeepEqual(app.Live.Command, []string{"pgrep", "app"}) {
		t.Errorf("live %+v", app.Live)
	}
	if want := (Restart{Policy: OnFailure, Backoff: time.Second, MaxBackoff: time.Minute, Limit: 3}); !reflect.DeepEqual(app.Restart, want) {
		t.Errorf("restart %+v, want %+v", app.Restart, want)
	}
	if !reflect.DeepEqual(app.SuccessExitCodes, []int{0, 143}) || !app.IsSuccess(143) {
		t.Errorf("success_exit_codes %v", app.SuccessExitCodes)
	}
	if want := (Stop{Signal: syscall.SIGQUIT, Command: []string{"/bin/sh", "-c", "kill -QUIT 1"}, Shell: true}); !reflect.DeepEqual(app.Stop, want) {
		t.Errorf("stop %+v, want %+v", app.Stop, want)
	}
	if app.Pos != (Pos{cfg.File, 16, 3}) {
		t.Errorf("pos %+v", app.Pos)
	}

	cache := cfg.Processes["cache"].Ready
	wantCache := Probe{Kind: ProbeTCP, Target: "127.0.0.1:6379", StartInterval: 50 * time.Millisecond,
		Interval: 5 * time.Second, Timeout: 2 * time.Second, InitialDelay: time.Second, SuccessThreshold: 2, FailureThreshold: 5}
	if !reflect.DeepEqual(*cache, wantCache) {
		t.Errorf("cache ready %+v, want %+v", *cache, wantCache)
	}
	if m := cfg.Processes["migrate"]; m.Type != Oneshot || m.Restart.Policy != OnFailure {
		t.Errorf("migrate %+v", m)
	}
	n := cfg.Processes["notifier"]
	if n.Ready.Kind != ProbeNotifyFD || n.Ready.FD != 3 || n.Live.Kind != ProbeFile || n.Live.Target != filepath.Join(dir, "alive") {
		t.Errorf("notifier ready %+v live %+v", n.Ready, n.Live)
	}
	lg := cfg.Processes["logger"].Ready
	if lg.Kind != ProbeLog || lg.Regexp == nil || !lg.Regexp.MatchString("ready on port 80") || lg.Regexp.MatchString("ready on port x") {
		t.Errorf("log probe %+v", lg)
	}
	if sd := cfg.Processes["sd"].Ready; sd.Kind != ProbeNotifySystemd {
		t.Errorf("sd probe %+v", sd)
	}
}

func TestVersionAndListenForms(t *testing.T) {
	for _, src := range []string{
		"version: 1\nlisten: \"off\"\nprocesses: {a: {command: x}}\n",
		"version: \"1\"\nlisten: off\nprocesses: {a: {command: x}}\n",
	} {
		cfg := mustParse(t, src, nil)
		if cfg.Listen != "off" {
			t.Errorf("listen %q", cfg.Listen)
		}
	}
	cfg := mustParse(t, "listen: \"[::1]:9000\"\nprocesses: {a: {command: x}}\n", nil)
	if cfg.Listen != "[::1]:9000" {
		t.Errorf("listen %q", cfg.Listen)
	}
}

func TestBOMAccepted(t *testing.T) {
	cfg := mustParse(t, "\xef\xbb\xbfprocesses:\n  a: {command: x}\n", nil)
	if cfg.Processes["a"].Pos != (Pos{testFile, 2, 3}) {
		t.Errorf("pos %+v", cfg.Processes["a"].Pos)
	}
	// Offsets in errors still count the BOM's bytes.
	_, err := Parse(testFile, []byte("\xef\xbb\xbfa: \xff\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "procs.yaml:1:4: invalid UTF-8 at byte offset 6") {
		t.Errorf("got %v", err)
	}
}

func TestSignalForms(t *testing.T) {
	for in, want := range map[string]syscall.Signal{
		"SIGTERM": syscall.SIGTERM, "TERM": syscall.SIGTERM, "sigint": syscall.SIGINT,
		"Quit": syscall.SIGQUIT, "SIGHUP": syscall.SIGHUP, "USR1": syscall.SIGUSR1,
		"SIGUSR2": syscall.SIGUSR2, "WINCH": syscall.SIGWINCH,
	} {
		cfg := mustParse(t, "processes: {a: {command: x, stop: {signal: "+in+"}}}\n", nil)
		if got := cfg.Processes["a"].Stop.Signal; got != want {
			t.Errorf("%s: got %v, want %v", in, got, want)
		}
	}
}

func TestDependsOnForms(t *testing.T) {
	cfg := mustParse(t, `processes:
  init: {command: x, type: oneshot}
  db: {command: x}
  list: {command: x, depends_on: [init, db]}
  short: {command: x, depends_on: {init: completed, db: started}}
  long: {command: x, depends_on: {db: {restart: true}, init: {condition: ready}}}
`, nil)
	deps := func(name string) []string {
		var out []string
		for _, d := range cfg.Processes[name].DependsOn {
			out = append(out, fmt.Sprintf("%s:%s:%v", d.Name, d.Condition, d.Restart))
		}
		return out
	}
	for name, want := range map[string][]string{
		"list":  {"db:ready:false", "init:ready:false"},
		"short": {"db:started:false", "init:completed:false"},
		"long":  {"db:ready:true", "init:ready:false"},
	} {
		if got := deps(name); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if want := [][]string{{"db", "init"}, {"list", "long", "short"}}; !reflect.DeepEqual(cfg.Graph.Levels(), want) {
		t.Errorf("levels %v, want %v", cfg.Graph.Levels(), want)
	}
}

func TestUser(t *testing.T) {
	root, err := user.LookupId("0")
	if err != nil {
		t.Skipf("no user database: %v", err)
	}
	rootGroups, err := root.GroupIds()
	if err != nil {
		t.Skipf("no group database: %v", err)
	}
	var wantGroups []uint32
	for _, g := range rootGroups {
		var v uint32
		fmt.Sscan(g, &v)
		wantGroups = append(wantGroups, v)
	}
	cases := []struct {
		spec string
		want User
	}{
		{root.Username, User{Spec: root.Username, Name: root.Username, Home: root.HomeDir, Groups: wantGroups}},
		{"0", User{Spec: "0", Name: root.Username, Home: root.HomeDir, Groups: wantGroups}},
		{"0:5", User{Spec: "0:5", GID: 5, Name: root.Username, Home: root.HomeDir, Groups: wantGroups}},
		// A uid without a passwd entry: gid defaults to the uid, no groups.
		{"3999999", User{Spec: "3999999", UID: 3999999, GID: 3999999}},
		{"3999999:7", User{Spec: "3999999:7", UID: 3999999, GID: 7}},
	}
	for _, tc := range cases {
		cfg := mustParse(t, fmt.Sprintf("processes: {a: {command: x, user: %q}, b: {command: x, user: %q}}\n", tc.spec, tc.spec), nil)
		a, b := cfg.Processes["a"].User, cfg.Processes["b"].User
		if a == nil || !reflect.DeepEqual(*a, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.spec, a, tc.want)
		}
		if a == b {
			t.Errorf("%s: processes share one *User", tc.spec)
		}
	}
	// An unquoted number works as a uid too.
	cfg := mustParse(t, "processes: {a: {command: x, user: 3999999}}\n", nil)
	if u := cfg.Processes["a"].User; u == nil || u.UID != 3999999 {
		t.Errorf("numeric user: %+v", u)
	}
}

func TestTeardownWarning(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"within budget", `processes:
  db: {command: x}
  app: {command: x, depends_on: [db]}
`, ""},
		{"chain too long", `shutdown_timeout: 30s
processes:
  db: {command: x, stop: {timeout: 15s}}
  cache: {command: x, depends_on: [db], stop: {timeout: 20s}}
  app: {command: x, depends_on: [cache], stop: {timeout: 5s}}
  side: {command: x, depends_on: [db], stop: {timeout: 1s}}
`, "stop timeouts along the longest teardown chain app -> cache -> db add up to 40s, more than shutdown_timeout 30s"},
		{"single process above budget", `shutdown_timeout: 5s
processes:
  slow: {command: x}
`, "stop timeouts along the longest teardown chain slow add up to 10s, more than shutdown_timeout 5s"},
		{"completed oneshot does not count", `shutdown_timeout: 25s
processes:
  init: {command: x, type: oneshot}
  db: {command: x, depends_on: {init: completed}}
  app: {command: x, depends_on: [db]}
`, ""},
		{"oneshot awaited only as started counts", `shutdown_timeout: 25s
processes:
  init: {command: x, type: oneshot}
  db: {command: x, depends_on: {init: started}}
  app: {command: x, depends_on: [db]}
`, "stop timeouts along the longest teardown chain app -> db -> init add up to 30s, more than shutdown_timeout 25s"},
		{"a pod's budget: every process has min_grace", `shutdown_timeout: 5s
processes:
  proxy: {command: x, sidecar: true, stop: {timeout: 5s, min_grace: 2s}}
  app: {command: x, depends_on: {proxy: started}, stop: {timeout: 5s, min_grace: 2s}}
`, ""},
		{"one process without min_grace on the chain", `shutdown_timeout: 5s
processes:
  proxy: {command: x, stop: {timeout: 5s}}
  app: {command: x, depends_on: {proxy: started}, stop: {timeout: 5s, min_grace: 2s}}
`, "stop timeouts along the longest teardown chain app -> proxy add up to 10s, more than shutdown_timeout 5s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.src, nil).TeardownWarning(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	if got := (&Config{}).TeardownWarning(); got != "" {
		t.Errorf("empty config: %q", got)
	}
}

// TestNewlineInName checks that a name holding a newline cannot split an
// error line, whichever error mentions it.
func TestNewlineInName(t *testing.T) {
	_, err := Parse(testFile, []byte("processes:\n  \"a\\nb\": {type: job}\n"), nil)
	want := `procs.yaml:2:3 processes: invalid process name "a\nb" (use 1-63 of A-Z a-z 0-9 _ . - starting with a letter or digit)` + "\n" +
		`procs.yaml:2:3 processes.a\nb: command is required`
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		e    Error
		want string
	}{
		{Error{Pos: Pos{"p.yaml", 12, 5}, Path: "processes.app.depends_on", Msg: `unknown process "dbb"`, Hint: `did you mean "db"?`},
			`p.yaml:12:5 processes.app.depends_on: unknown process "dbb" (did you mean "db"?)`},
		{Error{Pos: Pos{"p.yaml", 3, 1}, Msg: "m"}, "p.yaml:3:1: m"},
		{Error{Pos: Pos{"p.yaml", 3, 0}, Msg: "m"}, "p.yaml:3: m"},
		{Error{Pos: Pos{File: "p.yaml"}, Msg: "m"}, "p.yaml: m"},
		{Error{Pos: Pos{"p.yaml", 1, 1}, Msg: "a\nb", Hint: "c\r\nd"}, `p.yaml:1:1: a\nb (c\r\nd)`},
	}
	for _, tc := range cases {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if newErrorList(nil) != nil {
		t.Error("newErrorList(nil) != nil")
	}
}

func TestSuggest(t *testing.T) {
	words := []string{"always", "db", "depends_on", "never", "on-failure", "web"}
	for word, want := range map[string]string{
		"dbb": "db", "depend_on": "depends_on", "alway": "always", "Never": "never",
		"onfailure": "on-failure", "x": "", "sometimes": "", "wbe": "", "": "",
		strings.Repeat("a", 100): "",
	} {
		if got := suggest(word, words); got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
	if got := distance("kitten", "sitting", 5); got != 3 {
		t.Errorf("distance = %d, want 3", got)
	}
}

// missingUser reports whether the config at path names a `user:` that does
// not resolve here.
func missingUser(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*user:\s*"?([A-Za-z_][A-Za-z0-9_-]*)`).FindAllStringSubmatch(string(data), -1) {
		if _, err := user.Lookup(m[1]); err != nil {
			return true
		}
	}
	return false
}

// TestExamples loads every examples/*/procs.yaml: shipped examples must be
// valid and within their shutdown budget.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/procs.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		cfg, err := Load(f, env(map[string]string{}))
		if err != nil && missingUser(f) {
			// The example runs a server as its Debian package's user, which
			// exists only where that package is installed (make test
			// installs them; a bare `go test` may not have them).
			t.Logf("%s: skipped, a configured user is not on this machine:\n%v", f, err)
			continue
		}
		if err != nil {
			t.Errorf("%s:\n%v", f, err)
			continue
		}
		if w := cfg.TeardownWarning(); w != "" {
			t.Errorf("%s: %s", f, w)
		}
	}
}

// listen_hosts (issue 34 item 13): DNS names or "*.domain"; an IP address,
// a port or a bare "*" is refused with the reason.
func TestListenHosts(t *testing.T) {
	cfg := mustParse(t, "listen_hosts: [podvisor.example.com, \"*.svc.cluster.local\", Pod.Example.]\nprocesses: {a: {command: x}}\n", nil)
	if want := []string{"podvisor.example.com", "*.svc.cluster.local", "Pod.Example."}; !slices.Equal(cfg.ListenHosts, want) {
		t.Errorf("ListenHosts = %q, want %q", cfg.ListenHosts, want)
	}
	for src, want := range map[string]string{
		`listen_hosts: ["10.0.0.1"]`:       `procs.yaml:1:16 listen_hosts[0]: "10.0.0.1" is an IP address`,
		`listen_hosts: ["[::1]"]`:          `is an IP address`,
		`listen_hosts: ["a.example:9464"]`: `invalid host name "a.example:9464": no port`,
		`listen_hosts: ["*"]`:              `invalid host name "*"`,
		`listen_hosts: ["a.*.example"]`:    `"*" only as "*." before a domain`,
		`listen_hosts: ["a..example"]`:     `1 to 63 characters`,
		`listen_hosts: ["a b"]`:            `letters, digits`,
		`listen_hosts: a.example`:          `expected a list of host names`,
		`listen_hosts: [1]`:                `expected a string`,
	} {
		_, err := Parse(testFile, []byte(src+"\nprocesses: {a: {command: x}}\n"), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
}
