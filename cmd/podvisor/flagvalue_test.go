package main

import (
	"strings"
	"testing"
)

// TestBadFlagValues: a flag given a value it cannot take is a usage error
// (exit 2) that names the flag, the value, what is expected and an example,
// as an unknown flag is: never Go's raw flag error and usage dump.
func TestBadFlagValues(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"restart", "web", "--timeout", "5"}, `podvisor restart: invalid value "5" for --timeout: want a duration with a unit (ms, s, m or h), such as --timeout 5s`},
		{[]string{"logs", "web", "--tail", "abc"}, `podvisor logs: invalid value "abc" for --tail: want a whole number, such as --tail 10`},
		{[]string{"logs", "--tail=abc", "web"}, `invalid value "abc" for --tail: want a whole number`},
		{[]string{"wait", "--timeout", "1", "--tcp", "127.0.0.1:1"}, `podvisor wait: invalid value "1" for --timeout: want a duration with a unit (ms, s, m or h), such as --timeout 5s`},
		{[]string{"wait", "--tcp", "127.0.0.1:1", "--interval", "fast"}, `invalid value "fast" for --interval: want a duration`},
		{[]string{"timeline", "--width", "wide"}, `podvisor timeline: invalid value "wide" for --width: want a whole number, such as --width 10`},
		{[]string{"status", "--json=maybe"}, `podvisor status: invalid value "maybe" for --json: want true or false (or the flag alone for true), such as --json=false`},
		{[]string{"stop", "web", "--timeout"}, `podvisor stop: --timeout needs a value: a duration with a unit (ms, s, m or h), such as --timeout 5s`},
		{[]string{"check", "-c"}, `podvisor check: -c needs a value, such as -c FILE`},
		{[]string{"kube", "play", "pod.yaml", "--image-command"}, `podvisor kube play: --image-command needs a value, such as --image-command IMAGE=CMD`},
		// Unknown flags after a positional argument get the same polish.
		{[]string{"logs", "web", "--tial", "3"}, "podvisor logs: unknown flag --tial (did you mean --tail?)"},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(tt.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
		for _, raw := range []string{"parse error", "Usage of", "flag provided", "  -"} {
			if strings.Contains(errOut, raw) {
				t.Errorf("%q: stderr has Go's raw flag output (%q):\n%s", tt.args, raw, errOut)
			}
		}
		if !strings.HasSuffix(errOut, "Run 'podvisor "+strings.Join(strings.Fields(strings.SplitN(errOut, ":", 2)[0])[1:], " ")+" --help' for usage.\n") {
			t.Errorf("%q: no pointer to --help:\n%s", tt.args, errOut)
		}
	}
}
