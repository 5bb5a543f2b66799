package supervisor

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

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
