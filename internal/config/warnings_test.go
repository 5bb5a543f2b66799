package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestShellSignalRuleWarning: a signals: rule on a shell-string command
// without exec would wait for a death the shell reports as 128+N (issue 35).
func TestShellSignalRuleWarning(t *testing.T) {
	const rule = "\n    restart: {policy: never, rules: [{signals: [SEGV, ABRT], action: restart}]}\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"shell string without exec", "processes:\n  web:\n    command: \"./server --port 8080\"" + rule,
			[]string{"procs.yaml:4:38 processes.web.restart.rules[0]: the command is a shell string without exec: /bin/sh -c reports its death by SIGSEGV as exit code 139, by SIGABRT as 134, so this rule does not match them; start the command with exec (\"exec ./server ...\") or add exit_codes: {in: [139, 134]} in a rule of its own"}},
		{"exec", "processes:\n  web:\n    command: \"cd /srv && exec ./server\"" + rule, nil},
		{"argv", "processes:\n  web:\n    command: [./server]" + rule, nil},
		{"codes already covered", "processes:\n  web:\n    command: \"./server\"\n    restart: {rules: [{signals: [SEGV], action: restart}, {exit_codes: {in: [139]}, action: restart}]}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.src, nil).Warnings(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("warnings\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRemainAfterExit: services only, and not with restart always; check
// warns about a service that ends not ready for good (issue 35, item 2).
func TestRemainAfterExit(t *testing.T) {
	cfg := mustParse(t, "processes:\n  seed: {command: x, restart: never, remain_after_exit: true}\n  w: {command: x, restart: on-failure}\n  s: {command: x}\n", nil)
	if !cfg.Processes["seed"].RemainAfterExit {
		t.Error("remain_after_exit not read")
	}
	want := []string{"procs.yaml:3:3 processes.w: a service with restart: on-failure stays stopped after a success exit, and /readyz answers 503 from then on; " +
		"for a command meant to end, use type: oneshot (ready once completed) or add remain_after_exit: true"}
	if got := cfg.EndWarnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("end warnings\n got %q\nwant %q", got, want)
	}
	for _, c := range []struct{ src, pos, msg string }{
		{`{command: x, remain_after_exit: true}`, "procs.yaml:2:38", "with restart policy always has no effect"},
		{`{command: x, type: oneshot, remain_after_exit: true}`, "procs.yaml:2:53", "remain_after_exit is for a service, not a oneshot"},
		{`{command: x, restart: never, remain_after_exit: 1}`, "procs.yaml:2:54", "expected true or false"},
	} {
		_, err := Parse(testFile, []byte("processes:\n  a: "+c.src+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), c.pos) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %s ... %s", c.src, err, c.pos, c.msg)
		}
	}
}
