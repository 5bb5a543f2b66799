package launch

import (
	"sync"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// exitGate tells the supervisor of a child's exit once the child has been
// reaped and its output pipes have reached EOF, so its last lines come
// before the news of its exit (docs/reliability.md, B12). The drain is bounded: a
// grandchild may hold the pipes open indefinitely, so outputDrain after the
// reap the exit goes anyway. Usually both pipes are at EOF by the reap (the
// kernel closes a dying process's fds before it becomes a zombie).
//
// Whoever comes last (the reaper, the log pump at EOF, the drain timer)
// delivers, on its own goroutine: no goroutine per child waits for the exit
// (perf: memory with thousands of children, and one hand-off less between
// an exit and the supervisor hearing of it).
type exitGate struct {
	mu      sync.Mutex
	eofs    int        // pipes not at EOF yet
	ex      *proc.Exit // set once reaped
	done    bool
	timer   *time.Timer
	deliver func(proc.Exit) // releases the notify resources, tells the supervisor
}

func newExitGate(pipes int, deliver func(proc.Exit)) *exitGate {
	return &exitGate{eofs: pipes, deliver: deliver}
}

// eof is called by the log pump when one of the child's pipes reaches EOF.
func (g *exitGate) eof() {
	g.mu.Lock()
	g.eofs--
	fire := g.ex != nil && g.eofs == 0 && !g.done
	g.done = g.done || fire
	g.mu.Unlock()
	if fire {
		if g.timer != nil {
			g.timer.Stop()
		}
		g.deliver(*g.ex)
	}
}

// reaped is called by the reaper with the child's exit.
func (g *exitGate) reaped(ex proc.Exit) {
	g.mu.Lock()
	g.ex = &ex
	fire := g.eofs == 0 && !g.done
	g.done = g.done || fire
	if !fire {
		g.timer = time.AfterFunc(outputDrain, g.expire)
	}
	g.mu.Unlock()
	if fire {
		g.deliver(ex)
	}
}

// expire delivers the exit though some pipe is still open.
func (g *exitGate) expire() {
	g.mu.Lock()
	fire := !g.done
	g.done = true
	g.mu.Unlock()
	if fire {
		g.deliver(*g.ex)
	}
}
