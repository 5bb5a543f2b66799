package importer

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestSvShellSplitsAsShlex checks that the shell line written for a
// supervisord command holding a run-time variable gives, once podvisor has
// put the variable's value in (textually, at load) and /bin/sh has read it,
// the words supervisord's shlex finds in the expanded command.
func TestSvShellSplitsAsShlex(t *testing.T) {
	cases := []struct{ before, value, after string }{
		{"", "php artisan serve", " --port=8000"},
		{"run --name \"", "a b", "\" x"},
		{"run --name '", "a  b", "' x"},
		{"x", "-y z", "w"},
		{"tool --glob=*.log --re '^a$' \"cost $5\" a\\ b ", "one 'two three'", ";"},
		{"env A=1 ", "", " cmd"},
	}
	for _, tc := range cases {
		v := svValue{{text: tc.before}, {env: "X"}, {text: tc.after}}
		sh, err := svShell(v)
		if err != nil {
			t.Fatalf("%q: %v", tc, err)
		}
		want, err := splitWords(tc.before + tc.value + tc.after)
		if err != nil {
			t.Fatal(err)
		}
		// podvisor's load: ${X} becomes the value, $$ a $.
		line := strings.ReplaceAll(strings.ReplaceAll(sh, "${X}", tc.value), "$$", "$")
		out, err := exec.Command("/bin/sh", "-c", "for w in "+line+"; do printf '%s\\n' \"$w\"; done").Output()
		if err != nil {
			t.Fatalf("%q: sh: %v", line, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(want) == 0 {
			want = []string{""}
		}
		if !slices.Equal(got, want) {
			t.Errorf("command %q with X=%q: shell line %q gives %q, shlex %q", tc.before+"%(ENV_X)s"+tc.after, tc.value, sh, got, want)
		}
	}
}

// TestSupervisordExpansionRefusals checks what supervisord refuses, or
// what podvisor cannot say, is reported as not converted with the fix.
func TestSupervisordExpansionRefusals(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"[program:cron]\ncommand=cron -f\nuser=%(ENV_CRON_USER)s\n", "needs CRON_USER from supervisord's environment"},
		{"[program:app]\ncommand=app\nstdout_logfile=%(ENV_LOGS)s/app.log\n", "needs LOGS from supervisord's environment"},
		{"[program:horizon]\nnumprocs=2\ncommand=php artisan horizon\n", "needs %(process_num)s in process_name"},
		{"[program:app]\ncommand=%(ENV_CMD)s 'open\n", "unterminated ' quote"},
	} {
		_, r, err := ConvertSupervisord(Source{Path: "s.conf", Data: []byte(tc.conf)}, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if txt := reportText(r); !r.Failed() || !strings.Contains(txt, tc.want) {
			t.Errorf("%q: want a failure saying %q, report:\n%s", tc.conf, tc.want, txt)
		}
	}
}

// TestSupervisordFatalListener checks that a listener stopping supervisord
// on PROCESS_STATE_FATAL only becomes restart.limit = startretries.
func TestSupervisordFatalListener(t *testing.T) {
	conf := "[program:a]\ncommand=a\nstartretries=5\n[program:b]\ncommand=b\n" +
		"[eventlistener:fatal]\ncommand=/usr/local/bin/kill_supervisor.py\nevents=PROCESS_STATE_FATAL\n"
	m, r, err := ConvertSupervisord(Source{Path: "s.conf", Data: []byte(conf)}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"a": 5, "b": 3} {
		if p := m.Process(name); p == nil || p.Restart.Limit != want || len(p.Restart.Rules) != 0 {
			t.Errorf("%s: restart %+v, want limit %d and no rules", name, p.Restart, want)
		}
	}
	if txt := reportText(r); !strings.Contains(txt, "PROCESS_STATE_FATAL") {
		t.Errorf("report does not say how the listener converted:\n%s", txt)
	}
}
