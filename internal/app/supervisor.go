package app

import (
	"os"
	"runtime/debug"
	"time"

	"github.com/podvisor/podvisor/internal/launch"
	"github.com/podvisor/podvisor/internal/observe"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// freeMemoryAfter: how long after every process is first ready the
// start-up's garbage goes back to the OS (a forced GC; 1.4 MB of RSS with
// 200 processes). Not at once: that GC stopped the world while the first
// children were still being exec'd, and a job that ends within this never
// pays for it (docs/BENCHMARKS.md section 20).
const freeMemoryAfter = time.Second

// newSupervisor builds the supervisor and its launcher from the run's
// pieces. It is the one place that fills supervisor.Options.
func (r *run) newSupervisor() (*supervisor.Supervisor, error) {
	launcher := &launch.Launcher{
		Reaper:     r.reaper,
		Sink:       r.sink,
		BaseEnv:    launch.CleanBaseEnv(os.Environ()),
		RuntimeDir: r.runDir.get,
		Log:        r.log,
		Tails:      r.tails,
		Sockets:    r.sockets,
		FDStore:    r.fdStore,
		Terminals:  r.terms,
		Cgroups:    r.cgroups,
	}
	r.launcher = launcher
	return supervisor.New(supervisor.Options{
		Config:     r.opts.Config,
		Launcher:   launcher,
		Checkers:   launcher.Checkers(),
		Log:        r.log,
		Watcher:    launch.FileWatcher{Log: r.log},
		OnEvent:    observe.Fanout(r.metrics.OnEvent, r.tl.OnEvent),
		OOM:        r.oom,
		Load:       r.opts.Load,
		OnReload:   r.reload,
		Tails:      r.tails,
		Outside:    r.opts.Outside,
		Pace:       r.opts.Pace,
		OnTeardown: r.cgroups.Teardown,
		OnRunning: func() {
			if r.opts.OnReady != nil {
				r.opts.OnReady()
			}
			time.AfterFunc(freeMemoryAfter, debug.FreeOSMemory)
		},
	})
}
