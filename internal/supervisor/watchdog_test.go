package supervisor

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

const watchdogYAML = `
processes:
  app:
    command: [a]
    ready: {notify: systemd}
    watchdog: 1s
    stop: {timeout: 2s}
`

// A child that pings keeps running; once it stops pinging, the deadline
// (last ping + 1s) is a liveness failure: TERM at exactly that instant,
// then the restart, with the watchdog's own reason.
func TestWatchdogMissRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, watchdogYAML, map[string]script{"app": {readyAfter: 100 * time.Millisecond,
			pingEvery: 400 * time.Millisecond, pingFor: 1900 * time.Millisecond}})
		time.Sleep(2500 * time.Millisecond)
		if h.has("2.5s signal app TERM") || h.index("signal app TERM") >= 0 {
			t.Errorf("stopped while pinging: %v", h.f.events())
		}
		time.Sleep(300 * time.Millisecond) // 2.8s: stopped, in backoff
		// The last ping was at 1.6s.
		if !h.has("2.6s signal app TERM") {
			t.Errorf("no TERM one interval after the last ping: %v", h.f.events())
		}
		p := h.sup.Snapshot().Processes[0]
		if p.State != "backoff" || p.WatchdogFailures != 1 || !strings.HasPrefix(p.Reason, "watchdog: no WATCHDOG=1 within 1s") {
			t.Errorf("app %+v", p)
		}
		time.Sleep(5 * time.Second)
		// The second incarnation pings all along: it is never stopped.
		terms := 0
		for _, e := range h.f.events() {
			if strings.HasSuffix(e, "signal app TERM") {
				terms++
			}
		}
		if p := h.sup.Snapshot().Processes[0]; terms != 1 || p.Restarts != 1 || p.State != "running" {
			t.Errorf("%d TERMs, app %+v", terms, p)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestWatchdogNeverPinged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, watchdogYAML, map[string]script{"app": {readyAfter: 100 * time.Millisecond}})
		time.Sleep(1600 * time.Millisecond)
		h.mustHave("0s start app", "1s signal app TERM", "1s exit app 143", "1.5s start app")
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

func TestWatchdogTrigger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, watchdogYAML, map[string]script{"app": {readyAfter: 100 * time.Millisecond,
			pingEvery: 300 * time.Millisecond, pingTrigger: 700 * time.Millisecond}})
		time.Sleep(time.Second)
		h.mustHave("700ms trigger app", "700ms signal app TERM")
		if p := h.sup.Snapshot().Processes[0]; p.Reason != "watchdog: WATCHDOG=trigger" {
			t.Errorf("reason %q", p.Reason)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}

// EXTEND_TIMEOUT_USEC during a stop moves its SIGKILL, but never past
// shutdown_timeout.
func TestExtendTimeoutInStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
shutdown_timeout: 20s
processes:
  slow: {command: [s], stop: {timeout: 2s}}
  capped: {command: [c], stop: {timeout: 2s}}
`, map[string]script{
			"slow":   {stopDelay: 4 * time.Second, extendOnTerm: 5 * time.Second},
			"capped": {stopDelay: time.Minute, extendOnTerm: time.Hour},
		})
		time.Sleep(time.Second)
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
		// slow exits by itself at 5s, inside its extended 6s; capped is
		// killed at the 21s deadline, not at 3s and not an hour later.
		h.mustHave("1s signal slow TERM", "5s exit slow 143", "1s signal capped TERM", "21s signal capped KILL")
		h.mustNotHaveSuffix("signal slow KILL")
	})
}

// STOPPING=1 (notifyext.go): the service is stopping with no signal from
// podvisor; a death by SIGTERM after it is a clean stop, so restart:
// always starts it again and restart: never leaves it stopped without
// ending the run; one that hangs gets SIGKILL at its stop timeout.
func TestStoppingNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  again: {command: [a], restart: {policy: always, backoff: 1s}}
  once: {command: [o], restart: never}
  hangs: {command: [h], restart: {policy: on-failure, backoff: 1h}, stop: {timeout: 2s}}
  other: {command: [x]}
`, map[string]script{
			"again": {selfStop: time.Second, exitAfter: 1500 * time.Millisecond, exitSignal: syscall.SIGTERM, firstOnly: true},
			"once":  {selfStop: time.Second, exitAfter: 1500 * time.Millisecond},
			"hangs": {selfStop: time.Second, ignoreTerm: true},
		})
		time.Sleep(1200 * time.Millisecond)
		for _, p := range h.sup.Snapshot().Processes {
			if p.Name != "other" && (p.State != "stopping" || p.Reason != reasonSelfStop) {
				t.Errorf("%s after STOPPING=1: %+v", p.Name, p)
			}
		}
		time.Sleep(3 * time.Second) // 4.2s
		h.mustHave("1s stopping again", "1.5s exit again 143", "2.5s start again", "1.5s exit once 0", "3s signal hangs KILL")
		h.mustNotHaveSuffix("signal again TERM")
		h.mustNotHaveSuffix("signal once TERM")
		for _, p := range h.sup.Snapshot().Processes {
			switch p.Name {
			case "again":
				if p.State != "running" || p.Restarts != 1 {
					t.Errorf("again: %+v", p)
				}
			case "once":
				if p.State != "stopped" || p.Reason != "stopped on its own (STOPPING=1), exit code 0" {
					t.Errorf("once: %+v", p)
				}
			case "hangs":
				if p.State != "backoff" || p.Reason != "exited with code 137" {
					t.Errorf("hangs: %+v", p)
				}
			}
		}
		h.sigs <- syscall.SIGTERM
		if o := h.wait(time.Minute); o.Reason != ReasonSignal {
			t.Errorf("outcome %+v", o)
		}
	})
}

// podvisor reload NAME: a signal action on a notify process reloads until
// READY=1; a command action without notify ends with the command; a
// process without reload: is refused; RELOADING=1 sent before the reload
// began (MONOTONIC_USEC) is stale and ignored, one without it counts.
func TestReloadProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  a: {command: [a], ready: {notify: systemd}, reload: {signal: HUP}}
  c: {command: [c], reload: {command: [reload-c]}}
  n: {command: [n]}
`, map[string]script{"a": {readyAfter: 100 * time.Millisecond}})
		time.Sleep(time.Second)
		state := func(name string) string {
			for _, p := range h.sup.Snapshot().Processes {
				if p.Name == name {
					return p.State
				}
			}
			return "absent"
		}
		res := h.sup.Command(context.Background(), "reload", Request{Names: []string{"a", "c", "n"}})
		if res.OK || len(res.Results) != 3 || !strings.Contains(res.Results[2].Message, "no reload: action") {
			t.Fatalf("reload a c n: %+v", res)
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		h.mustHave("1s signal a hangup", "1s reloadcmd c")
		if state("a") != "reloading" || state("c") != "running" {
			t.Errorf("a %s, c %s after the reload; want reloading, running", state("a"), state("c"))
		}
		a := h.sup.recs[0]
		h.sup.send(readyEv{idx: a.idx, gen: 1, ready: true, detail: "READY=1"})
		time.Sleep(10 * time.Millisecond)
		if state("a") != "running" {
			t.Errorf("a %s after READY=1", state("a"))
		}
		h.sup.send(reloadingEv{idx: a.idx, gen: 1, at: time.Now().Add(-500 * time.Millisecond)})
		time.Sleep(10 * time.Millisecond)
		if state("a") != "running" {
			t.Errorf("a %s after a stale RELOADING=1", state("a"))
		}
		h.sup.send(reloadingEv{idx: a.idx, gen: 1})
		time.Sleep(10 * time.Millisecond)
		if state("a") != "reloading" {
			t.Errorf("a %s after its own RELOADING=1", state("a"))
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
