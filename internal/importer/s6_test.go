package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

// s6Fixtures are the s6-overlay trees shaped like an image's (etc/ at
// their root), read as import --root reads them, so that the paths are
// the image's. failing: the report must say something was not converted.
var s6Fixtures = []struct {
	name, root string
	failing    bool
}{
	{"s6-v3", "testdata/s6-v3", false},
	{"s6-runtime", "testdata/s6-runtime", true},
	// An image FROM an s6-overlay base: it adds to the dependencies of
	// the base's services (init-config, init-config-end), which are not
	// in the tree: said, not failed.
	{"s6-base", "testdata/s6-base", false},
}

func convertS6Root(t testing.TB, root string) (*Model, *Report) {
	t.Helper()
	files, err := readS6([]string{root}, root)
	if err != nil {
		t.Fatal(err)
	}
	m, r, err := ConvertS6(files, Options{})
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	return m, r
}

// TestS6Golden converts the image-shaped trees and compares the result and
// the report with testdata/golden (go test -update rewrites them); the
// result passes check --portable and shows every approximation.
func TestS6Golden(t *testing.T) {
	for _, fx := range s6Fixtures {
		t.Run(fx.name, func(t *testing.T) {
			m, r := convertS6Root(t, fx.root)
			if r.Failed() != fx.failing {
				t.Errorf("report says not converted: %v, want %v:\n%s", r.Failed(), fx.failing, reportText(r))
			}
			out := config.Write(m)
			compareGolden(t, "testdata/golden/"+fx.name+".yaml", out)
			compareGolden(t, "testdata/golden/"+fx.name+".report", []byte(reportText(r)))
			assertPortable(t, out)
			for _, e := range r.Entries {
				if e.Kind == Approximated && !bytes.Contains(out, []byte(config.CommentText(e.Detail))) {
					t.Errorf("approximation %q (%s) is not in the file", e.Detail, e.What)
				}
			}
		})
	}
}

// TestS6Behaviours checks, point by point, what s6 does and the converted
// file says, on the v3 fixture.
func TestS6Behaviours(t *testing.T) {
	m, r := convertS6Root(t, "testdata/s6-v3")
	proc := func(name string) *Process {
		t.Helper()
		p := m.Process(name)
		if p == nil {
			t.Fatalf("no process %s; got %v", name, names(m))
		}
		return p
	}
	dep := func(p *Process, on string) (graph.Condition, bool) {
		for _, d := range p.DependsOn {
			if d.Name == on {
				return d.Condition, true
			}
		}
		return 0, false
	}
	report := reportText(r)

	// The run script's working directory is its service directory, by
	// the image's path.
	if got := proc("svc-app").WorkingDir; got != "/etc/s6-overlay/s6-rc.d/svc-app" {
		t.Errorf("svc-app working_dir %q, want its service directory", got)
	}
	if got := proc("nginx").WorkingDir; got != "/etc/services.d/nginx" {
		t.Errorf("nginx working_dir %q, want its service directory", got)
	}
	// timeout-kill is the stop timeout (over timeout-down); timeout-up the
	// start timeout; timeout-kill 0 never kills: podvisor's longest.
	if p := proc("svc-app"); p.Stop.Timeout.Milliseconds() != 7000 || p.StartTimeout.Milliseconds() != 20000 {
		t.Errorf("svc-app stop %v start %v, want 7s and 20s", p.Stop.Timeout, p.StartTimeout)
	}
	if p := proc("svc-worker"); p.Stop.Timeout != maxDuration || p.Stop.Signal.String() != "interrupt" {
		t.Errorf("svc-worker stop %v signal %v, want 24h and SIGINT", p.Stop.Timeout, p.Stop.Signal)
	}
	if p := proc("nginx"); p.Stop.Timeout.Milliseconds() != 4000 {
		t.Errorf("services.d nginx stop %v, want its timeout-kill 4s", p.Stop.Timeout)
	}
	// notification-fd: readiness on that fd.
	if p := proc("svc-app"); p.Ready == nil || p.Ready.Kind != config.ProbeNotifyFD || p.Ready.FD != 3 {
		t.Errorf("svc-app ready %+v, want notify fd:3", p.Ready)
	}
	// A finish that halts: every exit ends the run; exit 125: no restart.
	if rules := proc("svc-app").Restart.Rules; len(rules) != 2 || rules[0].Action != config.RuleShutdown || rules[1].Action != config.RuleShutdown {
		t.Errorf("svc-app rules %+v, want shutdown on every exit", rules)
	}
	if rules := proc("svc-worker").Restart.Rules; len(rules) != 2 || rules[0].Action != config.RuleStop || rules[1].Action != config.RuleStop {
		t.Errorf("svc-worker rules %+v, want stop on every exit (finish exits 125)", rules)
	}
	// The logger is left out; its s6-log directory is the producer's log.
	if m.Process("svc-app-log") != nil {
		t.Errorf("the logger svc-app-log was converted as a process")
	}
	if l := proc("svc-app").Log; l.Stdout != config.DestFile || l.File != "/var/log/app/current" || l.MaxFiles != 6 || l.MaxSize != 2000000 || !l.Timestamps {
		t.Errorf("svc-app log %+v, want s6-log's /var/log/app/current, 6 files of 2000000 bytes, timestamps", l)
	}
	if c, ok := dep(proc("svc-app"), "init-dirs"); !ok || c != graph.Completed {
		t.Errorf("svc-app does not wait for init-dirs")
	}
	// Order: cont-init.d by name, then the user bundle, then services.d,
	// then user2's legacy-services dependents.
	if c, ok := dep(proc("init-10-adduser"), "init-02-timezone"); !ok || c != graph.Completed {
		t.Errorf("10-adduser does not follow 02-timezone")
	}
	for _, n := range []string{"init-dirs", "svc-app", "svc-cron", "svc-worker"} {
		if _, ok := dep(proc(n), "init-10-adduser"); !ok {
			t.Errorf("%s does not wait for the last cont-init.d script", n)
		}
	}
	for n, want := range map[string]graph.Condition{"svc-app": graph.Ready, "svc-worker": graph.Started, "init-dirs": graph.Completed} {
		if c, ok := dep(proc("nginx"), n); !ok || c != want {
			t.Errorf("services.d nginx waits for %s: %v %v, want %v (legacy-services depends on the user bundle)", n, c, ok, want)
		}
	}
	if _, ok := dep(proc("svc-late"), "nginx"); !ok {
		t.Errorf("svc-late (user2, dependencies.d/legacy-services) does not wait for services.d's nginx")
	}
	// Flags: s6-svc in a run script; with-contenv inside a script keeps
	// the environment.
	if c := proc("svc-cron").Written.Comments["command"]; !strings.Contains(c, "s6-svc") {
		t.Errorf("svc-cron's s6-svc is not flagged: %q", c)
	}
	if env := proc("svc-cron").Env; !contains(env, "S6_KEEP_ENV=1") {
		t.Errorf("svc-cron env %v, want S6_KEEP_ENV=1 for its inline with-contenv", env)
	}
	// No exec in front of a list.
	if cmd := proc("svc-worker").Command; !proc("svc-worker").Shell || cmd[2] != "./data/check-schema && exec ./data/worker --queue default" {
		t.Errorf("svc-worker command %q, want the line as written", cmd)
	}
	if cmd := proc("init-02-timezone").Command; strings.HasPrefix(cmd[len(cmd)-1], "exec ") {
		t.Errorf("02-timezone command %q: exec in front of a list", cmd)
	}
	for _, want := range []string{"svc-app-log: a logger", "nginx/log: a logger"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func names(m *Model) []string {
	var out []string
	for _, p := range m.Processes {
		out = append(out, p.Name)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestS6Runtime: services made by init scripts at run time, and calls to
// s6's supervisor, are reported.
func TestS6Runtime(t *testing.T) {
	_, r := convertS6Root(t, "testdata/s6-runtime")
	report := reportText(r)
	for _, want := range []string{"20-workers: init-20-workers: services made at run time: the script writes into /etc/services.d",
		"30-disable: init-30-disable: services made at run time: the script writes into /run/service", "it calls s6-svwait"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// TestS6OneLine: a one-line run script is exec'd only when it is one
// simple command; with-contenv and s6-setuidgid in front are read.
func TestS6OneLine(t *testing.T) {
	for _, tc := range []struct{ line, want, user string }{
		{"exec foo --bar", "exec foo --bar", ""},
		{"foo 2>&1", "exec foo 2>&1", ""},
		{"exec with-contenv s6-setuidgid abc foo -x 'a b'", "exec foo -x 'a b'", "abc"},
		{"/command/with-contenv foo $(cat ./data/args)", "exec foo $(cat ./data/args)", ""},
		{"foo || bar", "foo || bar", ""},
		{"exec foo && bar", "exec foo && bar", ""},
		{"foo; bar", "foo; bar", ""},
		{"foo | s6-log ./log", "foo | s6-log ./log", ""},
		{"foo &", "foo &", ""},
		{"echo 'a || b'", "exec echo 'a || b'", ""},
	} {
		c := &s6Conv{r: &Report{}, m: &Model{}, files: map[string]Source{"/s/run": {Path: "/s/run", Data: []byte("#!/bin/sh\n" + tc.line + "\n")}}}
		p := newProcess("x", "/s")
		c.script(p, "/s/run")
		if !p.Shell || p.Command[2] != tc.want || userSpec(p) != tc.user {
			t.Errorf("%q: command %q user %q, want %q user %q", tc.line, p.Command, userSpec(p), tc.want, tc.user)
		}
	}
}

// TestS6FinishConditional: a finish that halts or exits 125 only after
// some exits is said, not taken for every exit.
func TestS6FinishConditional(t *testing.T) {
	for _, tc := range []struct {
		finish string
		rules  int
		note   string
	}{
		{"#!/bin/sh\nexit 125\n", 2, ""},
		{"#!/bin/sh\nif [ \"$1\" -ne 0 ]; then exit 125; fi\n", 0, "on some exits only"},
		{"#!/bin/sh\n[ \"$1\" -eq 3 ] && exit 125\nexit 0\n", 0, "on some exits only"},
		{"#!/command/execlineb -S1\nif { eltest ${1} -ne 0 -a ${1} -ne 256 }\n/run/s6/basedir/bin/halt\n", 2, "halts the container on some exits only"},
		{"#!/command/execlineb -S0\nforeground { redirfd -w 1 /run/s6-linux-init-container-results/exitcode echo 0 }\n/run/s6/basedir/bin/halt\n", 2, "writes to the exitcode file"},
	} {
		c := &s6Conv{r: &Report{}, m: &Model{}, files: map[string]Source{"/s/finish": {Path: "/s/finish", Data: []byte(tc.finish)}}}
		p := newProcess("x", "/s")
		c.finish(p, "/s")
		if len(p.Restart.Rules) != tc.rules || !strings.Contains(p.Written.Comments["restart"], tc.note) {
			t.Errorf("%q: rules %+v comment %q, want %d rules and a comment with %q", tc.finish, p.Restart.Rules, p.Written.Comments["restart"], tc.rules, tc.note)
		}
	}
}

// TestS6RootStaysInside: with --root, a symbolic link out of the root is
// not read (it counts by name only, as a dependencies.d entry does).
func TestS6RootStaysInside(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("#!/bin/sh\nexec leaked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "etc/services.d/app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	files, err := readS6([]string{"/etc/services.d"}, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if bytes.Contains(f.Data, []byte("leaked")) {
			t.Fatalf("%s was read through a link out of --root", f.Path)
		}
	}
	if len(files) != 1 || files[0].Path != "/etc/services.d/app/run" {
		t.Errorf("files %v, want the link by the image's path, empty", files)
	}
}

// TestS6LoadUnderRoot: import --root DIR /etc/s6-overlay finds the tree
// under DIR (format detected there) and writes the image's paths.
func TestS6LoadUnderRoot(t *testing.T) {
	m, _, format, err := Load([]string{"/etc/s6-overlay"}, "", Options{Root: "testdata/s6-v3"})
	if err != nil {
		t.Fatal(err)
	}
	if format != S6 {
		t.Fatalf("format %s, want s6", format)
	}
	p := m.Process("svc-cron")
	if p == nil || p.WorkingDir != "/etc/s6-overlay/s6-rc.d/svc-cron" || p.Command[1] != "/etc/s6-overlay/s6-rc.d/svc-cron/run" {
		t.Fatalf("svc-cron %+v, want the image's paths", p)
	}
	if m.Process("nginx") != nil {
		t.Errorf("/etc/services.d was read though only /etc/s6-overlay was named")
	}
}
