package config

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExitRules(t *testing.T) {
	src := `processes:
  a:
    command: x
    restart:
      policy: on-failure
      rules:
        - {exit_codes: {in: [42]}, action: shutdown}
        - {signals: [SEGV, abrt], action: restart-all}
        - {exit_codes: {not_in: [0, 1]}, action: stop}
        - {exit_codes: {in: [1]}, action: restart}
`
	cfg, err := Parse(testFile, []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Processes["a"]
	if n := len(p.Restart.Rules); n != 4 {
		t.Fatalf("%d rules, want 4", n)
	}
	if got := p.Restart.Rules[1].Signals; len(got) != 2 || got[0] != syscall.SIGSEGV || got[1] != syscall.SIGABRT {
		t.Errorf("signals %v", got)
	}
	if pos := p.Restart.Rules[0].Pos; pos.Line != 7 || pos.Col != 11 {
		t.Errorf("rule 1 at %v, want line 7 col 11", pos)
	}
	for _, c := range []struct {
		code int
		sig  syscall.Signal
		want int
	}{
		{42, 0, 0},
		{128 + 11, syscall.SIGSEGV, 1},
		{128 + 11, 0, 2}, // exit(139) is not a death by SIGSEGV
		{3, 0, 2},
		{1, 0, 3},
		{0, 0, -1},
	} {
		if got := p.Rule(c.code, c.sig); got != c.want {
			t.Errorf("Rule(%d, %v) = %d, want %d", c.code, c.sig, got, c.want)
		}
	}
}

func TestExitRulesRefused(t *testing.T) {
	every := make([]string, 256)
	for i := range every {
		every[i] = strconv.Itoa(i)
	}
	for _, c := range []struct{ name, rules, pos, msg string }{
		{"shadowed", "[{exit_codes: {not_in: [0]}, action: stop}, {exit_codes: {in: [3]}, action: restart}]",
			"procs.yaml:2:80", "the rules before it match every exit"},
		{"signal shadowed by its code", "[{exit_codes: {in: [143]}, action: stop}, {signals: [TERM], action: restart}]",
			"procs.yaml:2:78", "can never match"},
		{"not_in everything", "[{exit_codes: {not_in: [" + strings.Join(every, ",") + "]}, action: stop}]",
			"procs.yaml:2:37", "no exit code or signal satisfies it"},
		{"no condition", "[{action: stop}]", "procs.yaml:2:37", "needs exit_codes or signals"},
		{"no action", "[{exit_codes: {in: [1]}}]", "procs.yaml:2:37", "action is required"},
		{"both in and not_in", "[{exit_codes: {in: [1], not_in: [2]}, action: stop}]", "procs.yaml:2:60", "not both"},
		{"bad action", "[{exit_codes: {in: [1]}, action: reboot}]", "procs.yaml:2:69", `unknown rule action "reboot"`},
		{"bad signal", "[{signals: [FOO], action: stop}]", "procs.yaml:2:48", `unknown signal "FOO"`},
		{"empty in", "[{exit_codes: {in: []}, action: stop}]", "procs.yaml:2:55", "at least one exit code"},
	} {
		src := "processes:\n  a: {command: x, restart: {rules: " + c.rules + "}}\n"
		_, err := Parse(testFile, []byte(src), env(nil))
		if err == nil || !strings.Contains(err.Error(), c.pos) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %s ... %s", c.name, err, c.pos, c.msg)
		}
	}
}

func TestWatchdog(t *testing.T) {
	cfg, err := Parse(testFile, []byte("processes:\n  a: {command: x, ready: {notify: systemd}, watchdog: 2s}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Processes["a"].Watchdog; d != 2*time.Second {
		t.Errorf("watchdog %v", d)
	}
	for _, c := range []struct{ src, pos, msg string }{
		{"{command: x, watchdog: 2s}", "procs.yaml:2:29", "watchdog needs ready: {notify: systemd}"},
		{"{command: x, ready: {notify: systemd}, watchdog: 50ms}", "procs.yaml:2:55", "shorter than 100ms"},
		{"{command: x, ready: {notify: systemd}, watchdog: 0s}", "procs.yaml:2:55", "greater than 0"},
	} {
		_, err := Parse(testFile, []byte("processes:\n  a: "+c.src+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), c.pos) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %s ... %s", c.src, err, c.pos, c.msg)
		}
	}
}

func TestSchedule(t *testing.T) {
	cfg, err := Parse(testFile, []byte("processes:\n  a: {command: x, type: oneshot, schedule: {cron: \"*/5 * * * *\", timezone: UTC, concurrency: replace}}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Processes["a"].Schedule
	if s == nil || s.Concurrency != Replace || s.Location != time.UTC {
		t.Fatalf("schedule %+v", s)
	}
	if next := s.Next(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)); !next.Equal(time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)) {
		t.Errorf("next %v", next)
	}
	for _, c := range []struct{ src, pos, msg string }{
		{`{command: x, type: oneshot, schedule: {cron: "0 0 30 2 *"}}`, "procs.yaml:2:51", "never fires"},
		{`{command: x, type: oneshot, schedule: {cron: "61 * * * *"}}`, "procs.yaml:2:51", "invalid cron expression"},
		{`{command: x, schedule: {every: 1m}}`, "procs.yaml:2:29", "schedule is for a oneshot"},
		{`{command: x, type: oneshot, schedule: {every: 1m, cron: "* * * * *"}}`, "procs.yaml:2:44", "cron or every, exactly one"},
		{`{command: x, type: oneshot, schedule: {every: 1m, concurrency: allow}}`, "procs.yaml:2:69", "allow is not supported"},
		{`{command: x, type: oneshot, schedule: {every: 1m, jitter: 1m}}`, "procs.yaml:2:64", "not less than every"},
		{`{command: x, type: oneshot, schedule: {cron: "@daily", timezone: Mars/Olympus}}`, "procs.yaml:2:71", "unknown time zone"},
	} {
		_, err := Parse(testFile, []byte("processes:\n  a: "+c.src+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), c.pos) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %s ... %s", c.src, err, c.pos, c.msg)
		}
	}
}

func TestWatchConfig(t *testing.T) {
	cfg, err := Parse(testFile, []byte("processes:\n  a: {command: x, watch: {paths: [\"src/*.go\"], action: signal HUP}}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Processes["a"].Watch
	if w == nil || w.Signal != syscall.SIGHUP || !w.Cascade || w.Debounce != 300*time.Millisecond || !strings.HasSuffix(w.Paths[0], "/src/*.go") {
		t.Fatalf("watch %+v", w)
	}
	for _, c := range []struct{ src, msg string }{
		{`{command: x, watch: {paths: ["*/x.go"]}}`, "wildcard in a directory"},
		{`{command: x, watch: {paths: ["[x"]}}`, "invalid glob pattern"},
		{`{command: x, watch: {paths: [a], action: reboot}}`, `unknown watch action "reboot"`},
		{`{command: x, watch: {paths: [a], action: signal FOO}}`, `unknown signal "FOO"`},
		{`{command: x, watch: {debounce: 1s}}`, "paths is required"},
	} {
		_, err := Parse(testFile, []byte("processes:\n  a: "+c.src+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "procs.yaml:2:") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %s", c.src, err, c.msg)
		}
	}
}
