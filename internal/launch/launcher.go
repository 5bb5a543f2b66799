package launch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// Launcher is the supervisor's real Launcher: it spawns through the
// reaper, connects stdout and stderr to the log sink and sets up readiness
// notification.
type Launcher struct {
	Reaper  *proc.Reaper
	Sink    *logs.Sink
	BaseEnv []string // podvisor's own environment, inherited by every child
	// RuntimeDir returns the private directory for notify sockets,
	// making it on the first call (a run without notify sockets makes
	// none: nothing to create at start, nothing to remove at exit).
	RuntimeDir func() (string, error)
	Log        *slog.Logger // nil: nothing is logged
	Tails      *logs.Tails  // recent output per process, for `podvisor logs`; may be nil
	Sockets    *Sockets     // the processes' listening sockets (sockets.go); may be nil
	FDStore    *FDStore     // fds processes stored (fdstore.go); may be nil
	Terminals  *Terminals   // tty: and stdin: processes, for attach (terminal.go); may be nil
	Cgroups    *Cgroups     // the cgroups of processes with resources (cgroups.go); may be nil

	notify notifyPool // spare notify sockets (notify.go)
}

var _ supervisor.Launcher = (*Launcher)(nil)

// logger is Log, or a logger that drops everything when Log is nil.
func (l *Launcher) logger() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}

// outputDrain bounds the wait for a dead child's pipes to reach EOF.
const outputDrain = 100 * time.Millisecond

// stopOutputLimit bounds the stop.command output kept for the log.
const stopOutputLimit = 4 << 10

// hiddenEnv are variables of podvisor's own environment that describe
// podvisor's parent's arrangements, not the child's: passing them on would
// make a child answer podvisor's service manager, or (podvisor's own
// hand-over from kube play to its re-exec: fd numbers and a state file)
// make a child that is itself podvisor take fds that are not its own. Every
// child's environment (processes, exec probes, hooks, stop commands) starts
// from CleanBaseEnv, so this is the one place that keeps them in.
var hiddenEnv = []string{"NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC",
	"PODVISOR_CONTROL_INHERITED", "PODVISOR_KUBE_MOUNTED"}

// Env returns p's full environment: podvisor's own (less hiddenEnv), then
// HOME/USER/LOGNAME of a configured user, then the config's env (global,
// env_file, process; already merged by config). Later entries win. A bare
// uid without a passwd entry gets HOME=/ as Docker gives it, and USER and
// LOGNAME set to the number, so podvisor's own (/root, root) never leak.
func (l *Launcher) Env(p *config.Process) []string {
	var extra []string
	if u := p.User; u != nil {
		if u.Name != "" {
			extra = []string{"HOME=" + u.Home, "USER=" + u.Name, "LOGNAME=" + u.Name}
		} else {
			id := strconv.FormatUint(uint64(u.UID), 10)
			extra = []string{"HOME=/", "USER=" + id, "LOGNAME=" + id}
		}
	}
	base := l.BaseEnv
	if p.Root != "" {
		base = nil // this machine's variables mean nothing inside a root
	}
	return config.MergeEnv(base, extra, p.Env)
}

// cred is p's user as the spawner takes it; nil runs as podvisor.
func cred(p *config.Process) *proc.Cred {
	if u := p.User; u != nil {
		return &proc.Cred{UID: u.UID, GID: u.GID, Groups: u.Groups}
	}
	return nil
}

// credRunner runs exec probes as the process's user, in its root.
type credRunner struct {
	r    *proc.Reaper
	root string
	cred *proc.Cred
}

func (c credRunner) RunCommand(ctx context.Context, argv, env []string, dir string, maxOutput int) (int, []byte, error) {
	return c.r.RunCommandIn(ctx, c.root, c.cred, argv, env, dir, maxOutput)
}

// CleanBaseEnv drops hiddenEnv from environ.
func CleanBaseEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		hidden := false
		for _, h := range hiddenEnv {
			hidden = hidden || k == h
		}
		if !hidden {
			out = append(out, kv)
		}
	}
	return out
}

// Checkers returns the factory for polled probes, with exec probes spawned
// through the reaper in the process's environment and working directory.
func (l *Launcher) Checkers() supervisor.CheckerFactory {
	return func(p *config.Process, probe *config.Probe, since time.Time) (health.Checker, error) {
		env := l.Env(p)
		c, err := health.NewChecker(probe, credRunner{l.Reaper, p.Root, cred(p)}, env, p.WorkingDir, since)
		if err != nil {
			return nil, err
		}
		return redactingChecker{c, envRedactor(env, p.SecretEnv)}, nil
	}
}

// Launch starts one incarnation of p.
func (l *Launcher) Launch(p *config.Process, gen uint64, h supervisor.Hooks) (supervisor.Child, error) {
	env := l.Env(p)
	var term *Terminal
	if p.Attachable() {
		term = l.Terminals.For(p.Name, p.TTY)
		if p.TTY {
			env = withTERM(env)
		}
	}
	wiring, err := openStdio(p, term)
	if err != nil {
		return nil, err
	}
	var cleanups []func() // the notify and stdin resources, released at the exit
	if c := wiring.atExit(term); c != nil {
		cleanups = append(cleanups, c)
	}
	abort := func(err error) (supervisor.Child, error) {
		wiring.closeChild()
		wiring.closeOurs()
		for _, c := range cleanups {
			c()
		}
		return nil, err
	}

	spec := proc.Spec{Argv: p.Command, Dir: p.WorkingDir, Root: p.Root, Cred: cred(p), DeathSignal: syscall.SIGKILL, OOMScoreAdj: p.OOMScoreAdj}
	wiring.spec(&spec)
	withPrivileges(&spec, p)
	files, names, err := listenFiles(l.Sockets, l.FDStore, p)
	if err != nil {
		return abort(err)
	}
	if len(files) > 0 {
		spec.ListenFiles = files
		env = config.MergeEnv(env, listenEnv(names))
	}
	var (
		tap       func([]byte)
		notifyR   *os.File
		readyKind config.ProbeKind
	)
	sock, sockEnv, err := l.notifySocket(p)
	if err != nil {
		return abort(err)
	}
	if sock != nil {
		env = config.MergeEnv(env, sockEnv)
		cleanups = append(cleanups, func() { sock.Close() })
		if p.Watchdog > 0 {
			// WATCHDOG_PID is the child's own pid, known only after the
			// fork: the spawn's pid shim sets it, as it does LISTEN_PID,
			// so a descendant that inherits the environment does not
			// take the watchdog for its own (sd_watchdog_enabled(3)).
			spec.PidEnv = append(spec.PidEnv, "WATCHDOG_PID")
		}
	}
	if p.Ready != nil {
		readyKind = p.Ready.Kind
		switch readyKind {
		case config.ProbeLog:
			m := health.NewLogMatcher(p.Ready.Regexp, func(line string) { h.Ready("log line matched: " + clip(line, 200)) })
			tap = m.Feed
		case config.ProbeNotifyFD:
			r, w, perr := health.NewNotifyPipe()
			if perr != nil {
				return abort(fmt.Errorf("notify pipe: %w", perr))
			}
			notifyR = r
			spec.NotifyFD, spec.NotifyFile = p.Ready.FD, w
			cleanups = append(cleanups, func() { r.Close() })
		}
	}
	// What the process can make podvisor say at will through its socket is
	// throttled; what is still counted is told when the socket closes.
	var warn *warnLimiter
	if sock != nil {
		warn = newWarnLimiter(l.logger(), realClock{}, warnInterval)
		cleanups = append(cleanups, warn.Close)
	}
	spec.Env = env
	g := l.Cgroups.group(p, gen, &spec)
	gate := newExitGate(wiring.streams(), func(ex proc.Exit) {
		// The notify resources of an incarnation go before the
		// supervisor hears of its exit.
		for _, c := range cleanups {
			c()
		}
		l.Cgroups.exited(p.Name, g, &ex)
		h.Exited(ex)
	})
	var mp *mainProc // nil when no other can be named
	mp, spec.OnExit = l.mainProcFor(p, sock, h, gate.reaped)
	child, err := proc.Spawn(l.Reaper, spec)
	if mp != nil && err == nil {
		mp.setLeader(child)
	}
	wiring.closeChild()
	if spec.NotifyFile != nil {
		spec.NotifyFile.Close() // only the child may hold the write end (s6 rule)
	}
	if err != nil {
		l.Cgroups.exited(p.Name, g, &proc.Exit{})
		wiring.closeOurs()
		for _, c := range cleanups {
			c()
		}
		return nil, err
	}
	wiring.start(l.Sink, term, func(stream string, tap func([]byte)) logs.Stream {
		return l.stream(p, stream, gen, l.Tails.For(p.Name), tap, gate.eof)
	}, tap)
	switch {
	case sock != nil:
		go l.readNotify(p, sock, mp, readyKind, h, warn)
	case notifyR != nil:
		go l.waitNotifyFD(p, notifyR, h)
	}
	if mp != nil {
		return g.child(mp, p.Name, l.logger()), nil
	}
	return g.child(child, p.Name, l.logger()), nil
}

// notifySocket makes p's NOTIFY_SOCKET when it needs one (ready: {notify:
// systemd}, or an fd store, which needs one even without notify
// readiness), with the variables that go with it; nil when it needs none.
func (l *Launcher) notifySocket(p *config.Process) (*health.NotifySocket, []string, error) {
	notify := p.Ready != nil && p.Ready.Kind == config.ProbeNotifySystemd
	if !notify && (p.FDStoreMax == 0 || l.FDStore == nil) {
		return nil, nil, nil
	}
	sock, err := l.notify.socket(l.RuntimeDir)
	if err != nil {
		return nil, nil, fmt.Errorf("notify socket: %w", err)
	}
	env := []string{"NOTIFY_SOCKET=" + sock.Path()}
	if notify && p.Watchdog > 0 {
		env = append(env, "WATCHDOG_USEC="+strconv.FormatInt(p.Watchdog.Microseconds(), 10))
	}
	return sock, env, nil
}

// mainProcFor is the main process of an incarnation of p whose exits go
// to exited, when another process than the spawned one can become it: by
// MAINPID= on its notify socket sock, or by its daemon's pid file; and
// what the reaper calls at the spawned one's exit. Else it is nil, and
// exited is called.
func (l *Launcher) mainProcFor(p *config.Process, sock *health.NotifySocket, h supervisor.Hooks, exited func(proc.Exit)) (*mainProc, func(proc.Exit)) {
	if sock == nil && p.Daemon == nil {
		return nil, exited
	}
	mp := newMainProc(l.Reaper, uidOf(p), sock, exited)
	if p.Daemon != nil {
		mp.daemon = func(ex proc.Exit) {
			if !p.IsSuccess(ex.Code()) {
				mp.exited(ex) // the command failed: no daemon to look for
				return
			}
			awaitDaemon(p, mp, h, ex)
		}
	}
	return mp, mp.leaderExited
}

// uidOf is the real uid p runs as.
func uidOf(p *config.Process) int {
	if p.User != nil {
		return int(p.User.UID)
	}
	return os.Getuid()
}

// stream says where one output stream of incarnation gen of p goes (its
// log keys): podvisor's stdout, its file, or nowhere. The tail and a log
// readiness check see every line in any case.
func (l *Launcher) stream(p *config.Process, stream string, gen uint64, tail *logs.Tail, tap func([]byte), atEOF func()) logs.Stream {
	st := logs.Stream{Name: p.Name, Stream: stream, Incarnation: gen, Tail: tail, Tap: tap, AtEOF: atEOF}
	o := p.Log
	dest, file := o.Stdout, o.File
	if stream == "stderr" {
		dest, file = o.Stderr, o.StderrFile
	}
	switch dest {
	case config.DestOff:
		st.Off = true
	case config.DestFile:
		st.File = l.Sink.File(logs.FileOptions{Path: file, MaxSize: o.MaxSize, MaxFiles: o.MaxFiles, Compress: o.Compress, Format: o.Format, Timestamps: o.Timestamps})
	}
	return st
}

// StopCommand runs p's stop.command in p's environment, bounded by ctx.
func (l *Launcher) StopCommand(ctx context.Context, p *config.Process) error {
	return l.runAs(ctx, p, p.Stop.Command, "stop")
}

// ReloadCommand runs p's reload.command in p's environment, bounded by ctx.
func (l *Launcher) ReloadCommand(ctx context.Context, p *config.Process) error {
	return l.runAs(ctx, p, p.Reload.Command, "reload")
}

// runAs runs argv, p's what command, as p's user in its environment.
func (l *Launcher) runAs(ctx context.Context, p *config.Process, argv []string, what string) error {
	code, out, err := l.Reaper.RunCommandIn(ctx, p.Root, cred(p), argv, l.Env(p), p.WorkingDir, stopOutputLimit)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%s command exited with code %d: %s", what, code, clip(strings.TrimSpace(string(out)), 500))
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
