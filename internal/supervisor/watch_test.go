package supervisor

import (
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestChangesBroadcastByClose(t *testing.T) {
	var c changes
	c.notify() // nobody waits: nothing to close, nothing kept
	if c.ch.Load() != nil {
		t.Fatal("notify without waiters left a channel")
	}
	a, b := c.wait(), c.wait()
	if a != b {
		t.Fatal("two waiters before one publish got different channels")
	}
	select {
	case <-a:
		t.Fatal("closed before any publish")
	default:
	}
	c.notify()
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("not closed by publish")
		}
	}
	if n := c.wait(); n == a {
		t.Fatal("a waiter after the publish got the closed channel")
	}
}

// TestWatchCascadeKeepsDependencyOrder: a cascade restart stops the
// dependent before its dependency and starts the dependency before the
// dependent, however slowly the dependent stops (issue 35 item 15: db was
// back up while app was still stopping).
func TestWatchCascadeKeepsDependencyOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, `
processes:
  db:
    command: [db]
    watch: {paths: [/nonexistent/*.sql]}
  app: {command: [app], depends_on: {db: started}}
  web: {command: [web], depends_on: {app: started}}
`, map[string]script{"app": {stopDelay: time.Second}, "web": {stopDelay: 300 * time.Millisecond}})
		time.Sleep(time.Second)
		h.sup.send(watchEv{name: "db", file: "schema.sql"})
		time.Sleep(5 * time.Second)
		h.mustHave("1s signal web TERM", "1.3s exit web 143", "1.3s signal app TERM", "2.3s exit app 143",
			"2.3s signal db TERM", "2.3s exit db 143", "2.3s start db", "2.3s start app", "2.3s start web")
		if a, b := h.index("exit app 143"), h.index("signal db TERM"); a < 0 || b < 0 || a > b {
			t.Errorf("db signalled (event %d) before app exited (event %d)", b, a)
		}
		h.sigs <- syscall.SIGTERM
		h.wait(time.Minute)
	})
}
