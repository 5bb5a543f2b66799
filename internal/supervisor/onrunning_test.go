package supervisor

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// OnRunning is called once, when every process is first ready: not at the
// first start (podvisor frees the start-up's memory from it, and a forced GC
// among the first spawns slowed them), and not again after a restart.
func TestOnRunningOnceWhenAllReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const yml = `
processes:
  db:
    command: [db]
    ready: {log: "ready"}
  app:
    command: [app]
    restart: always
`
		f := newFake(map[string]script{
			"db":  {readyAfter: 2 * time.Second},
			"app": {exitAfter: 3 * time.Second, firstOnly: true},
		})
		t0 := time.Now()
		var mu sync.Mutex
		var at []time.Duration
		calls := func() []time.Duration { mu.Lock(); defer mu.Unlock(); return append([]time.Duration(nil), at...) }
		sup, err := New(Options{Config: parse(t, yml), Launcher: f, Checkers: f.checkers,
			OnRunning: func() { mu.Lock(); at = append(at, time.Since(t0)); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sigs := make(chan os.Signal, 1)
		out := make(chan Outcome, 1)
		go func() { out <- sup.Run(ctx, sigs) }()
		time.Sleep(time.Second)
		synctest.Wait()
		if c := calls(); len(c) != 0 {
			t.Fatalf("OnRunning called at %v, before db was ready", c)
		}
		time.Sleep(5 * time.Second) // db ready at 2s; app exits at 3s and restarts
		synctest.Wait()
		if c := calls(); len(c) != 1 || c[0] != 2*time.Second {
			t.Fatalf("OnRunning calls at %v, want one at 2s", c)
		}
		starts := 0
		for _, e := range f.events() {
			if strings.HasSuffix(e, " start app") {
				starts++
			}
		}
		if starts < 2 {
			t.Fatalf("app started %d times, want a restart; events:\n%s", starts, strings.Join(f.events(), "\n"))
		}
		sigs <- syscall.SIGTERM
		<-out
		if c := calls(); len(c) != 1 {
			t.Errorf("OnRunning calls at %v after the teardown, want one", c)
		}
	})
}
