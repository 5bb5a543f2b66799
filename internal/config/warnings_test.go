package config

import (
	"reflect"
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
