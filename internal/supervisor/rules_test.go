// Exit rules: shutdown with the process's code, stop without a restart,
// restart against the policy, and restart-all (stop everything at once,
// start again in dependency order).

package supervisor

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestRuleShutdownEndsWithTheCode(t *testing.T) {
	for _, code := range []int{42, 0} {
		synctest.Test(t, func(t *testing.T) {
			h := start(t, `
processes:
  db: {command: [d]}
  app:
    command: [a]
    depends_on: [db]
    restart: {rules: [{exit_codes: {in: [0, 42]}, action: shutdown}]}
`, map[string]script{"app": {exitAfter: time.Second, exitCodes: []int{code}}})
			o := h.wait(time.Minute)
			if o.ExitCode() != code || o.Process != "app" || o.Reason != ReasonRule {
				t.Errorf("outcome %+v exit %d, want %d from app", o, o.ExitCode(), code)
			}
			h.mustHave("1s signal db TERM")
			h.mustNotHaveSuffix("1.5s start app")
			p := h.sup.Snapshot().Processes[0] // app
			if p.Name != "app" || !strings.Contains(p.Reason, "rule 1 (shutdown)") || p.RuleMatches["rule 1 (shutdown)"] != 1 {
				t.Errorf("app %+v", p)
			}
		})
	}
}

func TestRuleStopKeepsItDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  app:
    command: [a]
    restart:
      policy: always
      rules:
        - {exit_codes: {in: [3]}, action: stop}
`, map[string]script{"app": {exitAfter: time.Second, exitCodes: []int{1, 3}}})
		time.Sleep(10 * time.Second)
		h.mustHave("1s exit app 1", "1.5s start app", "2.5s exit app 3")
		h.mustNotHaveSuffix("3s start app")
		p := h.sup.Snapshot().Processes[0]
		if p.State != "stopped" || p.Reason != "exited with code 3; rule 1 (stop)" {
			t.Errorf("app %+v", p)
		}
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.ExitCode() != 0 {
			t.Errorf("exit %d", o.ExitCode())
		}
	})
}

func TestRuleStopEndsAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  job:
    command: [j]
    type: job
    restart: {rules: [{exit_codes: {in: [75]}, action: stop}]}
`, map[string]script{"job": {exitAfter: time.Second, exitCodes: []int{75}}})
		if o := h.wait(time.Minute); o.Reason != ReasonJobsDone || o.ExitCode() != 0 {
			t.Errorf("outcome %+v", o)
		}
	})
}

func TestRuleRestartOverridesNever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  init:
    command: [i]
    type: oneshot
    restart: {policy: never, rules: [{exit_codes: {in: [75]}, action: restart}]}
  app: {command: [a], depends_on: {init: completed}}
`, map[string]script{"init": {exitAfter: time.Second, exitCodes: []int{75, 0}}})
		time.Sleep(5 * time.Second)
		h.mustHave("1s exit init 75", "1.5s start init", "2.5s exit init 0", "2.5s start app")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestRuleRestartAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  init: {command: [i], type: oneshot}
  db:
    command: [d]
    depends_on: {init: completed}
    stop: {command: [hook], timeout: 5s}
  app:
    command: [a]
    depends_on: [db]
    restart: {rules: [{signals: [SEGV], action: restart-all}]}
  side: {command: [s]}
`, map[string]script{
			"init": {exitAfter: 100 * time.Millisecond},
			"db":   {stopDelay: 2 * time.Second},
			"app":  {exitAfter: time.Second, exitSignal: syscall.SIGSEGV, firstOnly: true},
		})
		time.Sleep(10 * time.Second)
		// app died at 1.1s: db and side get their stop signal at once, without
		// db's stop.command; the start-up is replayed once db is gone at 3.1s.
		h.mustHave("1.1s exit app 139", "1.1s signal db TERM", "1.1s signal side TERM", "1.1s exit side 143",
			"3.1s exit db 143", "3.1s start init", "3.2s start db", "3.2s start app")
		h.mustNotHaveSuffix("stopcmd db")
		if h.index("3.1s start side") < 0 {
			t.Errorf("side not restarted with the rest: %v", h.f.events())
		}
		for _, e := range h.f.events() {
			if strings.HasPrefix(e, "2") && strings.Contains(e, "start") {
				t.Errorf("a start before every process stopped: %q", e)
			}
		}
		p := h.sup.Snapshot().Processes
		for _, x := range p {
			if x.Name == "app" && (x.Restarts != 1 || x.RuleMatches["rule 1 (restart-all)"] != 1) {
				t.Errorf("app %+v", x)
			}
		}
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.ExitCode() != 0 {
			t.Errorf("outcome %+v", o)
		}
	})
}
