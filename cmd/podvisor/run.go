package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/launch"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/observe"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
	"github.com/podvisor/podvisor/internal/timeline"
)

const (
	// sweepGrace is how long escaped descendants get between SIGTERM and
	// SIGKILL in the final sweep, after the ordered teardown is over.
	sweepGrace = 2 * time.Second
	// minThreads: the OS threads podvisor holds from its start
	// (proc.SpareThreads), the runtime's own included, made while the config
	// is parsed: before any child exists, since a child's fork bomb at a
	// pids limit must not leave the runtime without a thread it needs
	// (FAULTS D7). Under stress-ng TestFault_D7_PidsLimit saw the runtime
	// abort wanting a 12th thread with a total of 8, and an 18th with 16
	// made after the first spawn; 24 is what it always had.
	minThreads = 24
	// fdsPerProcess and fdSlack size the fd table reserved at start-up: a
	// process's stdout and stderr pipes and its notify socket or pipe, and
	// podvisor's own (HTTP and control connections, probes, epoll).
	fdsPerProcess = 3
	fdSlack       = 64
	// httpShutdown bounds the HTTP server's graceful shutdown at exit.
	httpShutdown = 2 * time.Second
	// logDrain bounds how long exit waits for the log sink (stdout may be
	// stuck; nothing may keep podvisor alive after its children are gone).
	logDrain = 5 * time.Second
	// minLogDrain is the least exit waits for the sink, even past the
	// shutdown_timeout deadline: enough for a healthy stdout's last lines.
	minLogDrain = 100 * time.Millisecond
	// freeMemoryAfter: how long after every process is first ready the
	// start-up's garbage goes back to the OS (a forced GC; 1.4 MB of RSS
	// with 200 processes). Not at once: that GC stopped the world while the
	// first children were still being exec'd, and a job that ends within
	// this never pays for it (BENCHMARKS.md section 20).
	freeMemoryAfter = time.Second
)

// runFlags defines run's flags (cmdRun and the command table share it).
func runFlags(fs *flag.FlagSet) (path, listen, logFormat, control *string) {
	path = configFlag(fs)
	listen = fs.String("listen", "", "HTTP `ADDR` for /readyz, /livez, /status, /metrics, /events and the web page (\"off\" disables; default from the config)")
	logFormat = fs.String("log-format", "", "log `FORMAT`: text or json (default from the config)")
	control = fs.String("control", "", "control socket `PATH`, or \"off\" (default: the config's control:, else $PODVISOR_CONTROL, else the default for this user)")
	return path, listen, logFormat, control
}

// cmdRun supervises the processes of a config. The order matters (docs/architecture.md):
// load the config, become a subreaper, start the reaper, bind the HTTP port
// (so "address in use" fails before any child exists), run the supervisor,
// and only after it returns stop the HTTP server and sweep what is left.
func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	path, listen, logFormat, controlFlag := runFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *logFormat != "" && *logFormat != "text" && *logFormat != "json" {
		fmt.Fprintf(stderr, "podvisor run: --log-format must be text or json, not %q\n", *logFormat)
		return exitUsage
	}
	// Before anything else touches signals: children must start with default
	// dispositions whatever podvisor inherited, and a closed stdout must not
	// kill podvisor with SIGPIPE.
	_, sanitizeErr := proc.Sanitize()
	// Set-up that needs no config runs while the config is parsed, on the
	// other core: the spawner threads (a millisecond or more) and the spare
	// threads.
	spawners := proc.StartSpawners()
	go proc.SpareThreads(minThreads)

	cfg, err := loadConfig(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	// The processes' sockets, all bound or none before anything starts, and
	// kept for the run (launch/sockets.go).
	sockets := launch.NewSockets()
	if err := sockets.BindAll(cfg); err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintln(stderr, "podvisor: cannot bind the processes' sockets; nothing was started")
		return exitFail
	}
	defer sockets.Close()
	format := cfg.Log.Format
	if *logFormat != "" {
		format = *logFormat
	}
	width := len("podvisor")
	for _, n := range cfg.Names {
		width = max(width, len(n))
	}
	out := stdout
	if f, ok := stdout.(*os.File); ok {
		out = logs.PollableStdout(f) // a stdout nobody reads stalls nobody (issue 29)
	}
	sink := logs.NewSink(out, logs.Options{Format: format, Width: width, Timestamps: cfg.Log.Timestamps})
	log := sink.Logger()
	// The children's pipes in one growth of the fd table, made while the
	// rest of the set-up goes on (see proc.ReserveFDs).
	reserveFDs := func(c *config.Config) {
		need := fdsPerProcess*len(c.Names) + fdSlack
		if limit, ok := openFileLimit(); ok && uint64(fdsHeld(c)) > limit {
			// Said once, up front: otherwise the last launches fail one
			// by one with "too many open files".
			log.Warn("the open-file limit is lower than this config needs; the last processes may fail to start",
				"processes", len(c.Names), "needs", fdsHeld(c), "limit", limit,
				"fix", "raise the limit (ulimit -n, docker/podman --ulimit nofile=N:N, systemd LimitNOFILE=)")
		}
		if err := proc.ReserveFDs(need); err != nil {
			log.Debug("fd table left to grow as needed", "err", err)
		}
	}
	go reserveFDs(cfg)
	// Set when the supervisor returns. A stuck stdout (D9) must not stretch
	// the teardown past shutdown_timeout: the drain gets what is left of it.
	var drainBy time.Time
	defer func() {
		d := logDrain
		if !drainBy.IsZero() {
			d = min(d, max(time.Until(drainBy), minLogDrain))
		}
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_ = sink.Close(ctx)
	}()
	if sanitizeErr != nil {
		log.Warn("signal dispositions", "err", sanitizeErr)
	}
	if w := cfg.TeardownWarning(); w != "" {
		log.Warn(w)
	}

	// Subscribe before any child exists, so no early signal is lost.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// SIGUSR1 also reopens the log files (after an external logrotate);
	// the supervisor still forwards it to the children.
	stopReopen := reopenOnSignal(sink, log)
	defer stopReopen()

	if os.Getpid() != 1 {
		if err := proc.BecomeSubreaper(); err != nil {
			log.Warn("cannot become a child subreaper: orphaned grandchildren will not be reaped or swept", "err", err)
		}
	}
	reaper := proc.NewReaperWith(log, spawners)
	reaperCtx, stopReaper := context.WithCancel(context.Background())
	defer stopReaper()
	go reaper.Run(reaperCtx)

	// Notify sockets live in the runtime directory. Made now if the config
	// needs it, so an unwritable TMPDIR fails before anything starts;
	// otherwise on first use (a reload that adds a notify process).
	runDir := &runtimeDir{}
	defer runDir.remove()
	if needsRuntimeDir(cfg) {
		if _, err := runDir.get(); err != nil {
			log.Error(err.Error())
			return exitFail
		}
	}
	metrics := server.NewMetrics()
	if err := metrics.Register(sink.Collector()); err != nil {
		log.Warn("log metrics", "err", err)
	}
	tl, oomDetector := observers(cfg, log)
	tails := logs.NewTails(cfg.Log.Tail, logs.DefaultTailBytes)
	fdStore := launch.NewFDStore(log)               // fds processes hand over (FDSTORE=1)
	self, _ := os.Hostname()                        // served by default, as names that are not public
	hosts := server.NewHosts(self, cfg.ListenHosts) // the Host names served (DNS rebinding)
	web := &liveHTTP{opts: server.Options{Logger: log, Timeline: tl, StoredFDs: fdStore.Count, Hosts: hosts}, log: log}
	defer fdStore.Close()
	var current atomic.Pointer[config.Config] // for `podvisor logs`
	current.Store(cfg)
	onReload := func(c *config.Config) {
		current.Store(c)
		sockets.Retain(c)
		fdStore.Retain(c)
		go reserveFDs(c) // a reload may add processes
		files := map[string]bool{}
		for _, p := range c.Processes {
			for _, f := range p.Log.Files() {
				files[f] = true
			}
		}
		sink.RetainFiles(func(path string) bool { return files[path] })
		tails.SetMaxLines(c.Log.Tail)
		if *logFormat == "" { // a --log-format flag outranks the file
			sink.SetFormat(c.Log.Format, c.Log.Timestamps)
		}
		hosts.Set(c.ListenHosts)
		if *listen == "" { // a --listen flag outranks the file
			web.apply(c.Listen)
		}
	}
	load := func() (*config.Config, error) { return loadConfig(*path) }
	sup, err := newSupervisor(cfg, reaper, sink, runDir, metrics, log, tl, oomDetector, tails, sockets, fdStore, load, onReload)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFail
	}

	addr := cfg.Listen
	if *listen != "" {
		addr = *listen
	}
	// Bound before any child is spawned: a port in use fails the run
	// while nothing needs tearing down.
	events := server.NewEvents(sup, metrics.Sampler())
	web.opts.Events = events
	if cfg.UI.Enabled {
		ui, err := webUI(cfg, control.Supervised{Supervisor: sup}, tl, log)
		if err != nil {
			log.Error("cannot serve the web page; nothing was started", "err", err)
			return exitFail
		}
		web.opts.UI = ui
	}
	web.handler = server.New(sup, metrics, web.opts)
	if err := web.serve(addr); err != nil {
		log.Error("cannot serve HTTP; nothing was started", "err", err)
		return exitFail
	}
	// Runs after the teardown: /readyz must keep answering 503 meanwhile.
	defer func() { web.shutdown(drainBy) }()
	ctlPath, explicit := controlPath(*controlFlag, cfg)
	cfgPath, _ := filepath.Abs(cfg.File)
	// The socket's event streams have a budget of their own: anonymous
	// clients of the HTTP port must not lock the operator out.
	stopControl, err := startControl(ctlPath, explicit, control.Identity{Pid: os.Getpid(), Config: cfgPath}, logsBackend{control.Supervised{Supervisor: sup}, sink, &current},
		map[string]http.Handler{"GET /v1/events": events.Handler(server.MaxStreams), "GET /v1/timeline": server.TimelineHandler(tl)}, log)
	if err != nil {
		log.Error("cannot create the control socket; nothing was started", "err", err)
		return exitFail
	}
	defer stopControl()

	outcome := sup.Run(context.Background(), sigs)
	drainBy = outcome.Deadline

	// The ordered teardown is over; anything still alive escaped it
	// (daemonized, or moved to another process group or session). The sweep
	// is part of the teardown: its grace comes out of what is left of
	// shutdown_timeout, or the orchestrator's own SIGKILL would beat us.
	grace := sweepGrace
	if !outcome.Deadline.IsZero() {
		grace = min(grace, max(time.Until(outcome.Deadline), 0))
	}
	sweepCtx, cancelSweep := context.WithTimeout(context.Background(), grace+3*time.Second)
	sw := proc.KillDescendants(sweepCtx, grace, log)
	cancelSweep()
	if sw.Terminated > 0 {
		log.Warn("final sweep stopped processes left behind", "terminated", sw.Terminated, "killed", sw.Killed, "remaining", sw.Remaining)
	}
	// SPEC: exit 1 when teardown had to SIGKILL something, the sweep included.
	outcome.Killed = outcome.Killed || sw.Killed > 0
	code := outcome.ExitCode()
	log.Info("exiting", "code", code, "cause", outcome.Detail)
	logShutdownReport(log, tl.Doc(time.Now()))
	return code
}

func newSupervisor(cfg *config.Config, reaper *proc.Reaper, sink *logs.Sink, runDir *runtimeDir, metrics *server.Metrics, log *slog.Logger,
	tl *timeline.Recorder, oom supervisor.OOMDetector, tails *logs.Tails, sockets *launch.Sockets, fdStore *launch.FDStore, load func() (*config.Config, error), onReload func(*config.Config)) (*supervisor.Supervisor, error) {
	launcher := &launch.Launcher{
		Reaper:     reaper,
		Sink:       sink,
		BaseEnv:    launch.CleanBaseEnv(os.Environ()),
		RuntimeDir: runDir.get,
		Log:        log,
		Tails:      tails,
		Sockets:    sockets,
		FDStore:    fdStore,
	}
	return supervisor.New(supervisor.Options{
		Config:   cfg,
		Launcher: launcher,
		Checkers: launcher.Checkers(),
		Watcher:  launch.FileWatcher{Log: log},
		Log:      log,
		OnEvent:  observe.Fanout(metrics.OnEvent, tl.OnEvent),
		OOM:      oom,
		Load:     load,
		OnReload: onReload,
		Tails:    tails,
		OnRunning: func() {
			time.AfterFunc(freeMemoryAfter, debug.FreeOSMemory)
		},
	})
}

// reopenOnSignal reopens the sink's log files on each SIGUSR1 until the
// returned function is called. A channel of its own: every channel notified
// for a signal gets it, so the supervisor's forwarding is untouched.
func reopenOnSignal(sink *logs.Sink, log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if n := sink.Reopen(); n > 0 {
					log.Info("log files reopened", "files", n)
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// needsRuntimeDir reports whether a process of cfg gets a notify socket:
// systemd readiness, or an fd store (see launch/notify.go).
func needsRuntimeDir(cfg *config.Config) bool {
	for _, p := range cfg.Processes {
		if p.Ready != nil && p.Ready.Kind == config.ProbeNotifySystemd || p.FDStoreMax > 0 {
			return true
		}
	}
	return false
}

// fdsHeld is how many fds podvisor holds with every process of c running:
// a stdout and a stderr pipe end each, a notify socket for those that have
// one, and fdSlack of its own.
func fdsHeld(c *config.Config) int {
	n := fdSlack
	for _, p := range c.Processes {
		n += 2
		if p.Ready != nil && p.Ready.Kind == config.ProbeNotifySystemd || p.FDStoreMax > 0 {
			n++
		}
	}
	return n
}

// openFileLimit is RLIMIT_NOFILE's soft limit (Go raises it to the hard
// limit at start-up, so this is as high as podvisor can go).
func openFileLimit() (uint64, bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, false
	}
	return lim.Cur, true
}
