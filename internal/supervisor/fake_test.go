package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/proc"
)

// script says how a fake process behaves. Durations are on the synctest clock.
type script struct {
	exitAfter  time.Duration // exit on its own after this; 0 = run until signalled
	exitCodes  []int         // exit code of each generation (last one repeats); default 0
	stopDelay  time.Duration // time to exit after the stop signal
	ignoreTerm bool          // only SIGKILL ends it
	readyAfter time.Duration // call Hooks.Ready after this (log/notify kinds); 0 = never
	spawnErr   error

	firstOnly    bool           // exitAfter applies to the first generation only
	readyOnTerm  bool           // call Hooks.Ready when the stop signal arrives (a ready line in a TERM trap)
	ignoreKill   bool           // survives SIGKILL too (uninterruptible sleep)
	hook         time.Duration  // how long stop.command runs (until cancelled)
	groupLinger  time.Duration  // the process group outlives the leader's exit by this
	exitSignal   syscall.Signal // at exitAfter, die by this signal instead of exiting
	pingEvery    time.Duration  // send WATCHDOG=1 this often (0: never)
	pingFor      time.Duration  // ... for this long after the start (0: forever); first generation only
	pingTrigger  time.Duration  // send WATCHDOG=trigger this long after the start (0: never); first generation only
	extendOnTerm time.Duration  // send EXTEND_TIMEOUT_USEC of this much when the stop signal arrives
	selfStop     time.Duration  // send STOPPING=1 this long after the start (0: never); first generation only
}

// fakeLauncher records every launch, signal and exit with its offset from t0.
type fakeLauncher struct {
	t0      time.Time
	scripts map[string]script

	// checks scripts polled probes: key "name/ready", "name/live" or
	// "name/startup"; the
	// function gets the attempt number (from 1) of that incarnation's probe.
	checks map[string]func(attempt int) health.Result

	onSignal func()        // called before each signal is recorded, if set
	quit     chan struct{} // closed: every fake child goroutine returns

	mu  sync.Mutex // guards log and pid
	log []string
	pid int
}

type fakeChecker struct {
	mu   sync.Mutex // guards n
	n    int
	f    func(int) health.Result
	name string
	fl   *fakeLauncher
}

func (c *fakeChecker) Check(ctx context.Context) health.Result {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	r := c.f(n)
	c.fl.record("probe %s %v", c.name, r.OK)
	return r
}

func (f *fakeLauncher) checkers(p *config.Process, probe *config.Probe, since time.Time) (health.Checker, error) {
	which := "ready"
	switch probe {
	case p.Live:
		which = "live"
	case p.Startup:
		which = "startup"
	}
	fn := f.checks[p.Name+"/"+which]
	if fn == nil {
		return nil, fmt.Errorf("no scripted check for %s/%s", p.Name, which)
	}
	return &fakeChecker{f: fn, name: p.Name + "/" + which, fl: f}, nil
}

func newFake(scripts map[string]script) *fakeLauncher {
	return &fakeLauncher{t0: time.Now(), scripts: scripts, pid: 100, quit: make(chan struct{})}
}

func (f *fakeLauncher) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf("%v ", time.Since(f.t0))+fmt.Sprintf(format, args...))
}

func (f *fakeLauncher) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *fakeLauncher) StopCommand(ctx context.Context, p *config.Process) error {
	f.record("stopcmd %s", p.Name)
	if d := f.scripts[p.Name].hook; d > 0 {
		select {
		case <-time.After(d):
			f.record("stopcmd %s done", p.Name)
		case <-ctx.Done():
			f.record("stopcmd %s cut", p.Name)
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeLauncher) ReloadCommand(ctx context.Context, p *config.Process) error {
	f.record("reloadcmd %s", p.Name)
	return nil
}

// WatchSeen: a fake child counts as seen running at once.
func (f *fakeLauncher) WatchSeen(context.Context, int, func()) bool { return false }

func (f *fakeLauncher) Launch(p *config.Process, gen uint64, h Hooks) (Child, error) {
	sc := f.scripts[p.Name]
	if sc.spawnErr != nil {
		f.record("spawnfail %s", p.Name)
		return nil, sc.spawnErr
	}
	f.mu.Lock()
	f.pid++
	pid := f.pid
	f.mu.Unlock()
	f.record("start %s", p.Name)
	code := 0
	if n := len(sc.exitCodes); n > 0 {
		code = sc.exitCodes[min(int(gen)-1, n-1)]
	}
	if sc.firstOnly && gen > 1 {
		sc.exitAfter = 0
	}
	if gen > 1 {
		sc.pingFor, sc.pingTrigger, sc.selfStop = 0, 0, 0
	}
	c := &fakeChild{f: f, name: p.Name, pid: pid, sc: sc, code: code,
		exited: h.Exited, sig: make(chan syscall.Signal, 16)}
	go c.run(h)
	return c, nil
}

type fakeChild struct {
	f    *fakeLauncher
	name string
	pid  int
	sc   script
	code int
	// exited is the launcher's Hooks.Exited: called once, as a reaper would.
	exited func(proc.Exit)
	sig    chan syscall.Signal

	mu         sync.Mutex
	groupUntil time.Time // zero while the leader lives
}

// GroupAlive reports whether the fake process group still has members:
// the leader until it exits, then lingering members for sc.groupLinger.
func (c *fakeChild) GroupAlive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groupUntil.IsZero() || time.Now().Before(c.groupUntil)
}

func (c *fakeChild) Pid() int { return c.pid }
func (c *fakeChild) Signal(s syscall.Signal) error {
	if c.f.onSignal != nil {
		c.f.onSignal()
	}
	c.f.record("signal %s %s", c.name, sigName(s))
	select {
	case c.sig <- s:
	default:
	}
	return nil
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGCONT:
		return "CONT"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGUSR1:
		return "USR1"
	}
	return s.String()
}

// status builds a wait status as the kernel would report it.
func exitStatus(code int) syscall.WaitStatus           { return syscall.WaitStatus(code << 8) }
func signalStatus(s syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(s) }

func (c *fakeChild) run(h Hooks) {
	var selfExit, ready <-chan time.Time
	if c.sc.exitAfter > 0 {
		selfExit = time.After(c.sc.exitAfter)
	}
	if c.sc.readyAfter > 0 {
		ready = time.After(c.sc.readyAfter)
	}
	var stopping <-chan time.Time
	var stopSig syscall.Signal
	var ping, pingEnd, trigger <-chan time.Time
	if c.sc.pingEvery > 0 {
		tk := time.NewTicker(c.sc.pingEvery)
		defer tk.Stop()
		ping = tk.C
		if c.sc.pingFor > 0 {
			pingEnd = time.After(c.sc.pingFor)
		}
	}
	if c.sc.pingTrigger > 0 {
		trigger = time.After(c.sc.pingTrigger)
	}
	var selfStop <-chan time.Time
	if c.sc.selfStop > 0 {
		selfStop = time.After(c.sc.selfStop)
	}
	for {
		select {
		case <-ping:
			c.f.record("ping %s", c.name)
			h.Watchdog(false)
		case <-pingEnd:
			ping, pingEnd = nil, nil
		case <-trigger:
			c.f.record("trigger %s", c.name)
			h.Watchdog(true)
			trigger = nil
		case <-c.f.quit:
			return
		case <-selfStop:
			c.f.record("stopping %s", c.name)
			h.Stopping()
			selfStop = nil
		case <-ready:
			h.Ready("fake ready")
			ready = nil
		case <-selfExit:
			if c.sc.exitSignal != 0 {
				c.exit(signalStatus(c.sc.exitSignal))
				return
			}
			c.exit(exitStatus(c.code))
			return
		case s := <-c.sig:
			switch {
			case s == syscall.SIGKILL && c.sc.ignoreKill:
			case s == syscall.SIGKILL:
				c.exit(signalStatus(syscall.SIGKILL))
				return
			case s == syscall.SIGCONT || s == syscall.SIGUSR1 || s == syscall.SIGUSR2 || s == syscall.SIGHUP: // handled (HUP: a reload)
			case c.sc.ignoreTerm:
			case stopping == nil:
				if c.sc.readyOnTerm {
					h.Ready("ready line in TERM trap")
				}
				if c.sc.extendOnTerm > 0 {
					h.Extend(c.sc.extendOnTerm)
				}
				stopSig = s
				stopping = time.After(c.sc.stopDelay)
			}
		case <-stopping:
			c.exit(signalStatus(stopSig))
			return
		}
	}
}

func (c *fakeChild) exit(ws syscall.WaitStatus) {
	c.mu.Lock()
	c.groupUntil = time.Now().Add(c.sc.groupLinger)
	c.mu.Unlock()
	ex := proc.Exit{Pid: c.pid, Status: ws, At: time.Now()}
	c.f.record("exit %s %d", c.name, ex.Code())
	c.exited(ex)
}

// parse loads a config from YAML text for a test.
func parse(t *testing.T, yml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// harness runs a supervisor on a fake launcher inside a synctest bubble.
type harness struct {
	t    *testing.T
	f    *fakeLauncher
	sup  *Supervisor
	sigs chan os.Signal
	out  chan Outcome
	stop context.CancelFunc
}

func start(t *testing.T, yml string, scripts map[string]script) *harness {
	return startWithChecks(t, yml, scripts, nil)
}

func startWithChecks(t *testing.T, yml string, scripts map[string]script, checks map[string]func(int) health.Result) *harness {
	t.Helper()
	f := newFake(scripts)
	f.checks = checks
	sup, err := New(Options{Config: parse(t, yml), Launcher: f, Checkers: f.checkers})
	watchTransitions(t, sup)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, f: f, sup: sup, sigs: make(chan os.Signal, 4), out: make(chan Outcome, 1), stop: cancel}
	go func() { h.out <- sup.Run(ctx, h.sigs) }()
	t.Cleanup(cancel)
	return h
}

// wait returns the outcome, failing the test if Run has not returned by the
// (fake) deadline.
func (h *harness) wait(limit time.Duration) Outcome {
	h.t.Helper()
	select {
	case o := <-h.out:
		return o
	case <-time.After(limit):
		h.t.Fatalf("supervisor still running after %v; events:\n%s", limit, strings.Join(h.f.events(), "\n"))
		return Outcome{}
	}
}

// has reports whether the event log contains want exactly (offset included).
func (h *harness) has(want string) bool {
	for _, e := range h.f.events() {
		if e == want {
			return true
		}
	}
	return false
}

func (h *harness) mustHave(wants ...string) {
	h.t.Helper()
	for _, w := range wants {
		if !h.has(w) {
			h.t.Errorf("missing event %q; events:\n%s", w, strings.Join(h.f.events(), "\n"))
		}
	}
}

func (h *harness) mustNotHaveSuffix(suffix string) {
	h.t.Helper()
	for _, e := range h.f.events() {
		if strings.HasSuffix(e, suffix) {
			h.t.Errorf("unexpected event %q; events:\n%s", e, strings.Join(h.f.events(), "\n"))
		}
	}
}

// index returns the position of the first event with the given suffix, or -1.
func (h *harness) index(suffix string) int {
	for i, e := range h.f.events() {
		if strings.HasSuffix(e, suffix) {
			return i
		}
	}
	return -1
}

var (
	errNotFound = &proc.SpawnError{Argv0: "nope", Reason: "not found in PATH", Err: errors.New("executable file not found in $PATH")}
	errNoPids   = &proc.SpawnError{Argv0: "a", Reason: "resource temporarily unavailable", Err: syscall.EAGAIN}
)
