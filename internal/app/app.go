// Package app composes `podvisor run`: the reaper, the log sink, the runtime
// directory, the observers (metrics, timeline, OOM kills), the processes'
// sockets and fd store, the supervisor, the HTTP server and the control
// socket, in the order docs/architecture.md gives. cmd/podvisor reads the
// flags and the config and calls Begin and Run; nothing else composes a run.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/launch"
	"github.com/podvisor/podvisor/internal/logs"
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
	// (D7 in docs/reliability.md). Under stress-ng TestFault_D7_PidsLimit
	// saw the runtime abort wanting a 12th thread with a total of 8, and an
	// 18th with 16 made after the first spawn; 24 is what it always had.
	minThreads = 24
	// httpShutdown bounds the HTTP server's graceful shutdown at exit.
	httpShutdown = 2 * time.Second
	// logDrain bounds how long exit waits for the log sink (stdout may be
	// stuck; nothing may keep podvisor alive after its children are gone).
	logDrain = 5 * time.Second
	// minLogDrain is the least exit waits for the sink, even past the
	// shutdown_timeout deadline: enough for a healthy stdout's last lines.
	minLogDrain = 100 * time.Millisecond
)

// ErrNotStarted is returned by Run when it stopped before any process was
// started. Run has already said why (on stderr, or in its log).
var ErrNotStarted = errors.New("nothing was started")

// Options is what a run is built from: the config, and what the flags of
// `podvisor run` set ("" leaves the config's value).
type Options struct {
	Config *config.Config
	// Load reads the config again, for a reload.
	Load      func() (*config.Config, error)
	Listen    string // --listen: the HTTP address, or "off"
	LogFormat string // --log-format: text or json
	Control   string // --control: the control socket's path, or "off"
	// Pod names the processes that are a pod's containers (kube play),
	// for the pod's phase and conditions in /status; nil otherwise.
	Pod *server.PodRoles
	// Pace is the kubelet's pace (kube play's default); zero: full speed.
	Pace supervisor.Pace
	// Outside names the processes of a config this run does not start
	// (profiles, names after the config: supervisor.Options.Outside).
	Outside func(*config.Config) []string
	// OnReady, if set, is called once when every process of the run is
	// first ready (run -d's background podvisor tells its starter).
	OnReady func()
	Stdout  io.Writer
	Stderr  io.Writer
}

// Early is the set-up that needs no config, begun by Begin while the config
// is parsed.
type Early struct {
	sanitizeErr error
	spawners    *proc.Spawners
}

// Begin starts the set-up that needs no config. It is called before
// anything else touches signals: children must start with default
// dispositions whatever podvisor inherited, and a closed stdout must not
// kill podvisor with SIGPIPE. The spawner threads (a millisecond or more)
// and the spare threads are made on the other core while the config is
// parsed.
func Begin() *Early {
	_, err := proc.Sanitize()
	e := &Early{sanitizeErr: err, spawners: proc.StartSpawners()}
	go proc.SpareThreads(minThreads)
	return e
}

// run holds the pieces of one run, built by Run's steps in order.
type run struct {
	opts     Options
	sink     *logs.Sink
	log      *slog.Logger
	sockets  *launch.Sockets
	reaper   *proc.Reaper
	runDir   *runtimeDir
	metrics  *server.Metrics
	tl       *timeline.Recorder
	oom      supervisor.OOMDetector
	tails    *logs.Tails
	fdStore  *launch.FDStore
	terms    *launch.Terminals // tty: and stdin: processes, for attach
	cgroups  *launch.Cgroups   // made on the first start that asks for resources
	hosts    *server.Hosts
	web      *liveHTTP
	current  atomic.Pointer[config.Config] // the config in effect, for `podvisor logs` and exec
	launcher *launch.Launcher              // for podvisor exec
	ending   *ending                       // for podvisor down
	// drainBy is set when the supervisor returns. A stuck stdout (D9) must
	// not stretch the teardown past shutdown_timeout: the drain gets what
	// is left of it.
	drainBy time.Time
}

// Run supervises the processes of o.Config until the supervisor returns and
// gives the run's exit code (supervisor.Outcome.ExitCode). The order matters
// (docs/architecture.md): become a subreaper, start the reaper, bind the
// processes' sockets and the HTTP port (so "address in use" fails before any
// child exists), run the supervisor, and only after it returns sweep what is
// left and stop the HTTP server. The error is ErrNotStarted.
func Run(e *Early, o Options) (int, error) {
	r := &run{opts: o}
	r.current.Store(o.Config)
	// The processes' sockets, all bound or none before anything starts, and
	// kept for the run (launch/sockets.go).
	r.sockets = launch.NewSockets()
	if err := r.sockets.BindAll(o.Config); err != nil {
		fmt.Fprintln(o.Stderr, err)
		fmt.Fprintln(o.Stderr, "podvisor: cannot bind the processes' sockets; nothing was started")
		return 0, ErrNotStarted
	}
	defer r.sockets.Close()
	r.startLog()
	defer r.drainLog()
	// The children's pipes in one growth of the fd table, made while the
	// rest of the set-up goes on.
	go reserveFDs(o.Config, r.log)
	if e.sanitizeErr != nil {
		r.log.Warn("signal dispositions", "err", e.sanitizeErr)
	}
	for _, w := range o.Config.Warnings() {
		r.log.Warn(w)
	}

	// Subscribe before any child exists, so no early signal is lost.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP)
	defer signal.Stop(sigs)
	r.ending = &ending{sigs: sigs, ended: make(chan struct{})}
	// SIGUSR1 also reopens the log files (after an external logrotate);
	// the supervisor still forwards it to the children.
	defer reopenOnSignal(r.sink, r.log)()

	defer r.startReaper(e.spawners)()
	r.runDir = &runtimeDir{}
	defer r.runDir.remove()
	if err := r.makeRuntimeDir(); err != nil {
		return 0, err
	}
	r.observe()
	defer r.fdStore.Close()
	sup, err := r.newSupervisor()
	if err != nil {
		r.log.Error("cannot start", "err", err)
		return 0, ErrNotStarted
	}
	// Stopped after the HTTP server and the control socket (deferred
	// before them): /status keeps its pod part to the end.
	defer r.trackPod(sup)()
	events, err := r.serveHTTP(sup)
	if err != nil {
		return 0, err
	}
	// Runs after the teardown: /readyz must keep answering 503 meanwhile.
	defer func() { r.web.shutdown(r.drainBy) }()
	stopControl, err := r.startControl(sup, events)
	if err != nil {
		return 0, err
	}
	defer stopControl()

	outcome := sup.Run(context.Background(), sigs)
	r.drainBy = outcome.Deadline
	return r.finish(outcome), nil
}

// startLog makes the log sink: podvisor's own lines and its processes'
// output, on stdout.
func (r *run) startLog() {
	cfg := r.opts.Config
	format := cfg.Log.Format
	if r.opts.LogFormat != "" {
		format = r.opts.LogFormat
	}
	width := len("podvisor")
	for _, n := range cfg.Names {
		width = max(width, len(n))
	}
	out := r.opts.Stdout
	if f, ok := out.(*os.File); ok {
		out = logs.PollableStdout(f) // a stdout nobody reads stalls nobody (issue 29)
	}
	r.sink = logs.NewSink(out, logs.Options{Format: format, Width: width, Timestamps: cfg.Log.Timestamps})
	r.log = r.sink.Logger()
}

// drainLog waits for the sink to write what it holds, within logDrain and
// what is left of shutdown_timeout.
func (r *run) drainLog() {
	d := logDrain
	if !r.drainBy.IsZero() {
		d = min(d, max(time.Until(r.drainBy), minLogDrain))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = r.sink.Close(ctx)
}

// startReaper makes podvisor the reaper of its descendants and starts the
// one loop that waits for children. It returns the function that stops it.
func (r *run) startReaper(spawners *proc.Spawners) (stop func()) {
	if os.Getpid() != 1 {
		if err := proc.BecomeSubreaper(); err != nil {
			r.log.Warn("cannot become a child subreaper: orphaned grandchildren will not be reaped or swept", "err", err)
		}
	}
	r.reaper = proc.NewReaperWith(r.log, spawners)
	ctx, cancel := context.WithCancel(context.Background())
	go r.reaper.Run(ctx)
	return cancel
}

// makeRuntimeDir makes the runtime directory, where notify sockets live,
// now if the config needs it, so an unwritable TMPDIR fails before
// anything starts; otherwise it is made on first use (a reload that adds a
// notify process).
func (r *run) makeRuntimeDir() error {
	if !needsRuntimeDir(r.opts.Config) {
		return nil
	}
	if _, err := r.runDir.get(); err != nil {
		r.log.Error(err.Error())
		return ErrNotStarted
	}
	return nil
}

// observe makes what watches the run: metrics, the timeline, the OOM
// detector, the output tails, the fd store and the HTTP server (not yet
// serving).
func (r *run) observe() {
	cfg := r.opts.Config
	r.metrics = server.NewMetrics()
	if err := r.metrics.Register(r.sink.Collector()); err != nil {
		r.log.Warn("log metrics", "err", err)
	}
	r.tl, r.oom = observers(cfg, r.log)
	r.tails = logs.NewTails(cfg.Log.Tail, logs.DefaultTailBytes)
	r.terms = launch.NewTerminals()
	r.fdStore = launch.NewFDStore(r.log) // fds processes hand over (FDSTORE=1)
	r.cgroups = launch.NewCgroups(r.log)
	go r.cgroups.Plan(cfg.Processes) // the first starts' cgroups, made while the rest is set up
	r.metrics.UseCgroups(r.cgroups.Figures)
	self, _ := os.Hostname()                         // served by default, as names that are not public
	r.hosts = server.NewHosts(self, cfg.ListenHosts) // the Host names served (DNS rebinding)
	r.web = &liveHTTP{opts: server.Options{Logger: r.log, Timeline: r.tl, StoredFDs: r.fdStore.Count, NotEnforced: r.cgroups.NotEnforced, Hosts: r.hosts}, log: r.log}
}

// trackPod starts the tracker of the pod's conditions (kube play), which
// /status on the HTTP port and on the control socket share. It returns the
// function that stops it.
func (r *run) trackPod(sup *supervisor.Supervisor) (stop func()) {
	if r.opts.Pod == nil {
		return func() {}
	}
	t := server.NewPodTracker(*r.opts.Pod, sup, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	go t.Run(ctx)
	r.web.opts.Pod = t
	return cancel
}

// serveHTTP binds the HTTP port and serves it, before any child is
// spawned: a port in use fails the run while nothing needs tearing down.
func (r *run) serveHTTP(sup *supervisor.Supervisor) (*server.Events, error) {
	cfg := r.opts.Config
	events := server.NewEvents(sup, r.metrics.Sampler())
	r.web.opts.Events = events
	if cfg.UI.Enabled {
		ui, err := webUI(cfg, logsBackend{control.Supervised{Supervisor: sup}, r.sink, &r.current, r.terms},
			func() server.Status { return server.NewStatus(sup.Snapshot()) }, r.tl, r.log)
		if err != nil {
			r.log.Error("cannot serve the web page; nothing was started", "err", err)
			return nil, ErrNotStarted
		}
		r.web.opts.UI = ui
	}
	r.web.handler = server.New(sup, r.metrics, r.web.opts)
	addr := cfg.Listen
	if r.opts.Listen != "" {
		addr = r.opts.Listen
	}
	if err := r.web.serve(addr); err != nil {
		r.log.Error("cannot serve HTTP; nothing was started", "err", err)
		return nil, ErrNotStarted
	}
	return events, nil
}

// startControl binds the control socket and serves it.
func (r *run) startControl(sup *supervisor.Supervisor, events *server.Events) (stop func(), err error) {
	path, explicit := ControlPath(r.opts.Control, r.opts.Config)
	cfgPath, _ := filepath.Abs(r.opts.Config.File)
	// The socket's event streams have a budget of their own: anonymous
	// clients of the HTTP port must not lock the operator out.
	routes := map[string]http.Handler{"GET /v1/events": events.Handler(server.MaxStreams), "GET /v1/timeline": server.TimelineHandler(r.tl),
		"GET /v1/status": server.StatusHandler(sup, r.metrics, r.web.opts), // podvisor status of a run -d or a pod, whatever its port
		"POST /v1/exec":  control.ExecHandler(execBackend{r}, r.log), "POST /v1/down": control.DownHandler(r.ending)}
	stop, err = startControl(path, explicit, control.Identity{Pid: os.Getpid(), Config: cfgPath}, logsBackend{control.Supervised{Supervisor: sup}, r.sink, &r.current, r.terms}, routes, r.log)
	if err != nil {
		r.log.Error("cannot create the control socket; nothing was started", "err", err)
		return nil, ErrNotStarted
	}
	return stop, nil
}

// finish sweeps what escaped the ordered teardown, writes the last log
// lines and returns the exit code.
func (r *run) finish(outcome supervisor.Outcome) int {
	// Anything still alive escaped the teardown (daemonized, or moved to
	// another process group or session). The sweep is part of the
	// teardown: its grace comes out of what is left of shutdown_timeout,
	// or the orchestrator's own SIGKILL would beat us.
	grace := sweepGrace
	if !outcome.Deadline.IsZero() {
		grace = min(grace, max(time.Until(outcome.Deadline), 0))
	}
	sweepCtx, cancelSweep := context.WithTimeout(context.Background(), grace+3*time.Second)
	sw := proc.KillDescendants(sweepCtx, grace, r.log)
	cancelSweep()
	r.cgroups.Close()
	if sw.Terminated > 0 {
		r.log.Warn("final sweep stopped processes left behind", "terminated", sw.Terminated, "killed", sw.Killed, "remaining", sw.Remaining)
	}
	// docs/reference.md: exit 1 when teardown had to SIGKILL something,
	// the sweep included.
	outcome.Killed = outcome.Killed || sw.Killed > 0
	code := outcome.ExitCode()
	r.log.Info("exiting", "code", code, "cause", outcome.Detail)
	logShutdownReport(r.log, r.tl.Doc(time.Now()))
	r.endWith(outcome, code) // podvisor down's answer, before the socket closes
	return code
}
