package supervisor

import (
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// The kubelet's teardown as kube play writes it: sidecars proxy and log
// (log after proxy), app regular; every preStop starts at once, the
// sidecars' signals wait for app, then go in reverse order.
const kubeTeardown = `
shutdown_timeout: 10s
processes:
  proxy:
    command: [p]
    sidecar: true
    stop: {timeout: 10s, command: [hook], command_first: true, min_grace: 2s}
  log:
    command: [l]
    sidecar: true
    depends_on: {proxy: started}
    stop: {timeout: 10s, command: [hook], command_first: true, min_grace: 2s}
  app:
    command: [a]
    depends_on: {proxy: started, log: started}
    stop: {timeout: 10s, command: [hook], command_first: true, min_grace: 2s}
`

func TestEveryStopCommandStartsWithTheTeardown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, kubeTeardown, map[string]script{
			"proxy": {hook: 1 * time.Second, stopDelay: 100 * time.Millisecond},
			"log":   {hook: 3 * time.Second, stopDelay: 100 * time.Millisecond},
			"app":   {hook: 2 * time.Second, stopDelay: 500 * time.Millisecond},
		})
		synctest.Wait()
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		h.mustHave("0s stopcmd proxy", "0s stopcmd log", "0s stopcmd app",
			"1s stopcmd proxy done", "2s stopcmd app done", "2s signal app TERM",
			"2.5s exit app 143", "3s stopcmd log done", "3s signal log TERM",
			"3.1s exit log 143", "3.1s signal proxy TERM", "3.2s exit proxy 143")
		if o.ExitCode() != 0 {
			t.Errorf("exit %d, want 0", o.ExitCode())
		}
	})
}

// Past the budget, a sidecar still waiting for its turn gets its stop
// signal and min_grace before SIGKILL; the SIGKILL of a sidecar leaves the
// exit code alone.
func TestMinGraceAfterTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, kubeTeardown, map[string]script{
			"proxy": {ignoreTerm: true},
			"log":   {stopDelay: 100 * time.Millisecond},
			"app":   {hook: time.Hour, ignoreTerm: true},
		})
		synctest.Wait()
		h.sigs <- syscall.SIGTERM
		o := h.wait(time.Minute)
		// app's hook had the whole budget, then its signal and 2 s; the
		// sidecars' wait for their turn ends with the budget too (the
		// kubelet's waitForTurn is capped by it): each gets its signal and
		// 2 s, whatever the order.
		h.mustHave("10s stopcmd app cut", "10s signal app TERM", "10s signal log TERM", "10s signal proxy TERM",
			"10.1s exit log 143", "12s signal app KILL", "12s exit app 137", "12s signal proxy KILL", "12s exit proxy 137")
		if !o.Killed || o.ExitCode() != 1 {
			t.Errorf("outcome %+v exit %d, want killed (app) and exit 1", o, o.ExitCode())
		}
	})
}

func TestSidecarKillIsNotTheRunsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
shutdown_timeout: 5s
processes:
  proxy: {command: [p], sidecar: true, stop: {timeout: 5s, min_grace: 2s}}
  test: {command: [t], type: job, depends_on: {proxy: started}}
`, map[string]script{"test": {exitAfter: time.Second}, "proxy": {ignoreTerm: true}})
		o := h.wait(time.Minute)
		h.mustHave("1s exit test 0", "1s signal proxy TERM", "6s signal proxy KILL")
		if o.Reason != ReasonJobsDone || o.ExitCode() != 0 {
			t.Errorf("outcome %+v exit %d, want jobs done and exit 0", o, o.ExitCode())
		}
	})
}

// Without the options podvisor's own teardown is unchanged: at
// shutdown_timeout what is left is killed outright.
func TestNoMinGraceKillsAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
shutdown_timeout: 3s
processes:
  a: {command: [a], stop: {timeout: 10s}}
  b: {command: [b], depends_on: [a], stop: {timeout: 10s, command: [hook]}}
`, map[string]script{"a": {ignoreTerm: true}, "b": {hook: time.Hour}})
		synctest.Wait()
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		h.mustHave("0s stopcmd b", "2.25s stopcmd b cut", "2.25s signal a TERM", "3s signal a KILL")
		h.mustNotHaveSuffix("stopcmd a")
	})
}
