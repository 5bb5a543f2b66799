// The invariant test's driver: random actions against the loop, and a fake
// launcher whose children act out their generated behaviour.

package supervisor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/proc"
)

type chaos struct {
	rng   *rand.Rand
	wd    *rand.Rand // watchdog hangs and triggers, leaving rng's sequence as it was
	yaml  string
	next  atomic.Pointer[string] // the config a reload reads
	ops   *rand.Rand             // operator commands draw from here, leaving rng's sequence as it was
	nt    *rand.Rand             // notify messages (STOPPING, RELOADING, MAINPID) and process reloads, likewise
	procs map[string]chaosProc
	n     int // processes p0..p(n-1); the last may be renamed r(n-1) by a reload
	sup   *Supervisor
	limit int // at most this many random events; -1: no limit
	t0    time.Time

	calm atomic.Bool // no more chaos: new children get ready by themselves

	stepAt  time.Time // loop goroutine only
	stepsAt int

	mu         sync.Mutex // guards everything below
	kids       map[string]*chaosChild
	probeOK    map[string]bool // "p1/ready", "p1/live"
	trace      []string
	violations []string
	pid        int
	killSent   bool                 // a SIGKILL in teardown that counts for the exit code (not a sidecar's)
	anyKill    bool                 // any SIGKILL in teardown
	sigAt      map[string]time.Time // stop signal of the current incarnation in teardown
	minGrace   time.Duration        // the largest stop.min_grace of the config
	deadline   time.Time            // teardown deadline once seen
	endedAt    time.Time            // when Run returned
}

func newChaos(seed uint64) *chaos {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &chaos{wd: rand.New(rand.NewPCG(seed^0x77617463, seed)), nt: rand.New(rand.NewPCG(seed^0x6e6f74696679, seed)), rng: rng, ops: rand.New(rand.NewPCG(seed^0x5bd1e995, seed)), procs: map[string]chaosProc{}, kids: map[string]*chaosChild{}, probeOK: map[string]bool{}, sigAt: map[string]time.Time{}, pid: 1000, t0: time.Now()}
	var procs []chaosProc
	// Exit rules draw from their own stream, so older seeds keep their
	// configs and events (TestInvariantRegressions).
	c.yaml, procs = genConfig(rng, rand.New(rand.NewPCG(seed^0x72756c6573, seed)), rand.New(rand.NewPCG(seed^0x737461727475, seed)), rand.New(rand.NewPCG(seed^0x6b657034343338, seed)))
	c.n = len(procs)
	for _, p := range procs {
		c.procs[p.name] = p
		c.minGrace = max(c.minGrace, p.minGrace)
		c.probeOK[p.name+"/ready"] = rng.IntN(2) == 0
		c.probeOK[p.name+"/live"] = true
	}
	// A reload may rename the last process (invariant_ops_test.go).
	last := procs[len(procs)-1]
	renamed := "r" + last.name[1:]
	c.procs[renamed] = chaosProc{name: renamed, typ: last.typ, readyKind: last.readyKind, live: last.live,
		ignoreTerm: last.ignoreTerm, stopDelay: last.stopDelay, hook: last.hook, watchdog: last.watchdog}
	c.probeOK[renamed+"/ready"] = c.probeOK[last.name+"/ready"]
	c.probeOK[renamed+"/live"] = true
	return c
}

func (c *chaos) logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trace = append(c.trace, fmt.Sprintf("%8v ", time.Since(c.t0))+fmt.Sprintf(format, args...))
}

// violate records a broken invariant; called with c.mu not held.
func (c *chaos) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.logf("VIOLATION %s", msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.violations) < 5 {
		c.violations = append(c.violations, msg)
	}
}

func (c *chaos) run() string {
	cfg, err := config.Parse("chaos.yaml", []byte(c.yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		return fmt.Sprintf("generated config does not load: %v\n%s", err, c.yaml)
	}
	c.next.Store(&c.yaml)
	sup, err := New(Options{Config: cfg, Launcher: c, Checkers: c.checkers, Load: c.load})
	if err != nil {
		return err.Error()
	}
	sup.onTransition = func(name string, from, to State) {
		if !allowed(from, to) {
			c.violate("process %s moved %s -> %s, which the transition table in state.go does not have", name, from, to)
		}
	}
	c.sup = sup
	sup.afterStep = c.checkStep
	sigs := make(chan os.Signal, 8)
	out := make(chan Outcome, 1)
	go func() {
		o := sup.Run(context.Background(), sigs)
		c.mu.Lock()
		c.endedAt = time.Now()
		c.mu.Unlock()
		out <- o
	}()

	var outcome *Outcome
	returned := func() bool {
		if outcome != nil {
			return true
		}
		select {
		case o := <-out:
			outcome = &o
			return true
		default:
			return false
		}
	}
	synctest.Wait()
	n := 10 + c.rng.IntN(maxActions-10)
	if c.limit >= 0 {
		n = min(n, c.limit)
	}
	for range n {
		if returned() {
			break
		}
		c.act(sigs)
		synctest.Wait()
	}
	if !returned() {
		c.settle()
		if !returned() {
			c.checkQuiescent()
			c.logf("SIGTERM (end)")
			sigs <- syscall.SIGTERM
		}
	}
	if outcome == nil {
		select {
		case o := <-out:
			outcome = &o
		case <-time.After(10 * time.Minute):
			c.violate("teardown never ended")
			close(sigs)
			return c.report()
		}
	}
	c.checkOutcome(*outcome)
	c.mu.Lock()
	for _, k := range c.kids {
		close(k.quit)
	}
	c.mu.Unlock()
	return c.report()
}

func (c *chaos) report() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.violations) == 0 {
		return ""
	}
	tail := c.trace
	if len(tail) > 80 {
		tail = tail[len(tail)-80:]
	}
	return fmt.Sprintf("violations:\n  %s\nconfig:\n%s\nlast %d trace lines:\n%s",
		strings.Join(c.violations, "\n  "), c.yaml, len(tail), strings.Join(tail, "\n"))
}

// act performs one random event.
func (c *chaos) act(sigs chan<- os.Signal) {
	r := c.rng.IntN(100)
	switch {
	case r < 25: // a child exits by itself
		if k := c.randomKid(); k != nil {
			code := []int{0, 1, 2, 137}[c.rng.IntN(4)]
			c.logf("act: %s exits %d", k.name, code)
			k.ctl <- code
		}
	case r < 35: // a log/notify readiness line
		if w := c.wd.IntN(5); w == 0 {
			// A debounced file change of a watched process.
			if r := c.randomWatched(); r >= 0 {
				c.logf("act: files of p%d changed", r)
				c.sup.send(watchEv{name: fmt.Sprintf("p%d", r), file: "x.go"})
				return
			}
		}
		if k := c.randomKid(); k != nil && c.procs[k.name].readyKind == "log" {
			// With a watchdog, the child may instead hang (stop pinging)
			// or send WATCHDOG=trigger; drawn from their own stream.
			switch w := c.wd.IntN(4); {
			case c.procs[k.name].watchdog == 0 || w < 2:
				c.logf("act: %s prints READY", k.name)
				k.ctl <- -1
				if c.procs[k.name].watchdog > 0 {
					c.notifyMore(k) // invariant_notify_test.go
				}
			case w == 2:
				c.logf("act: %s hangs (no more WATCHDOG=1)", k.name)
				k.ctl <- -2
			default:
				c.logf("act: %s sends WATCHDOG=trigger", k.name)
				k.ctl <- -3
			}
		}
	case r < 50: // a polled probe flips
		name := fmt.Sprintf("p%d", c.rng.IntN(c.n))
		which := []string{"/ready", "/live"}[c.rng.IntN(2)]
		c.mu.Lock()
		c.probeOK[name+which] = !c.probeOK[name+which]
		v := c.probeOK[name+which]
		c.mu.Unlock()
		c.logf("act: probe %s%s -> %v", name, which, v)
	case r < 56:
		sig := []os.Signal{syscall.SIGTERM, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGHUP}[c.rng.IntN(6)]
		c.logf("act: signal %v", sig)
		sigs <- sig
	default: // time passes
		if c.operate() { // or an operator command (invariant_ops_test.go)
			return
		}
		if k := c.notifyKid(); k != nil && c.nt.IntN(3) == 0 {
			c.notifyMore(k) // before the time passes (invariant_notify_test.go)
		}
		d := time.Duration(c.rng.IntN(4000)) * time.Millisecond
		if c.rng.IntN(10) == 0 {
			d = time.Duration(c.rng.IntN(5)) * time.Millisecond // a near-duplicate
		}
		c.logf("act: sleep %v", d)
		time.Sleep(d)
	}
}

// randomWatched returns the number of a process with watch: (a random
// one, from the watch stream), or -1.
func (c *chaos) randomWatched() int {
	var ws []int
	for i := range c.n {
		if c.procs[fmt.Sprintf("p%d", i)].watch {
			ws = append(ws, i)
		}
	}
	if len(ws) == 0 {
		return -1
	}
	return ws[c.wd.IntN(len(ws))]
}

func (c *chaos) randomKid() *chaosChild {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ks []*chaosChild
	for i := range c.n {
		if k := c.kids[fmt.Sprintf("p%d", i)]; k != nil && !k.exiting {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return nil
	}
	return ks[c.rng.IntN(len(ks))]
}

// settle ends the chaos: probes pass, pending readiness lines come, and
// time runs long enough for every backoff and restart to play out.
func (c *chaos) settle() {
	c.calm.Store(true)
	c.mu.Lock()
	for k := range c.probeOK {
		c.probeOK[k] = true
	}
	var log, finish []*chaosChild
	for _, k := range c.kids {
		switch {
		case k.exiting:
		case c.procs[k.name].typ != config.Service:
			finish = append(finish, k)
		case c.procs[k.name].readyKind == "log":
			log = append(log, k)
		}
	}
	c.mu.Unlock()
	c.logf("settle")
	for _, k := range log {
		k.ctl <- -1
	}
	for _, k := range finish { // oneshots and jobs do their work
		// One finishing may have ended the run (the last job) and with it
		// the others: an exited child reads ctl no more (the order of
		// c.kids is random, so this was a rare deadlock).
		c.mu.Lock()
		gone := k.exiting
		c.mu.Unlock()
		if gone {
			continue
		}
		k.ctl <- 0
		synctest.Wait()
	}
	time.Sleep(5 * time.Minute)
	synctest.Wait()
}

type chaosChild struct {
	c       *chaos
	name    string
	pid     int
	ctl     chan int // exit code >= 0, or -1: print the ready line
	sig     chan syscall.Signal
	quit    chan struct{}
	exiting bool // guarded by c.mu
}

func (k *chaosChild) Pid() int {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	return k.pid
}

// GroupAlive: a chaos child's group ends with it.
func (k *chaosChild) GroupAlive() bool { return false }

func (k *chaosChild) Signal(sig syscall.Signal) error {
	k.c.checkSignal(k.name, k.Pid(), sig)
	k.c.logf("signal %s %s", k.name, sigName(sig))
	k.sig <- sig
	return nil
}

func (c *chaos) Launch(p *config.Process, gen uint64, h Hooks) (Child, error) {
	c.checkLaunch(p.Name)
	c.mu.Lock()
	c.pid++
	k := &chaosChild{c: c, name: p.Name, pid: c.pid, ctl: make(chan int), sig: make(chan syscall.Signal, 64), quit: make(chan struct{})}
	c.kids[p.Name] = k
	c.mu.Unlock()
	c.logf("start %s gen %d", p.Name, gen)
	go k.run(h, c.procs[p.Name])
	return k, nil
}

// WatchSeen: a chaos child counts as seen running at once.
func (c *chaos) WatchSeen(context.Context, int, func()) bool { return false }

func (c *chaos) ReloadCommand(ctx context.Context, p *config.Process) error {
	c.logf("reloadcmd %s", p.Name)
	return nil
}

func (c *chaos) StopCommand(ctx context.Context, p *config.Process) error {
	d := c.procs[p.Name].hook
	c.logf("stopcmd %s (%v)", p.Name, d)
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *chaos) checkers(p *config.Process, probe *config.Probe, since time.Time) (health.Checker, error) {
	which := "/ready" // a startup check too: a flip of ready fails or passes both
	if probe == p.Live {
		which = "/live"
	}
	return chaosCheck{c: c, key: p.Name + which}, nil
}

type chaosCheck struct {
	c   *chaos
	key string
}

func (ch chaosCheck) Check(context.Context) health.Result {
	ch.c.mu.Lock()
	ok := ch.c.probeOK[ch.key]
	ch.c.mu.Unlock()
	return health.Result{OK: ok, Detail: "scripted"}
}

func (k *chaosChild) run(h Hooks, p chaosProc) {
	var ready, done <-chan time.Time
	if k.c.calm.Load() {
		if p.readyKind == "log" {
			ready = time.After(10 * time.Millisecond)
		}
		if p.typ != config.Service {
			done = time.After(20 * time.Millisecond)
		}
	}
	var stopping <-chan time.Time
	var stopSig syscall.Signal
	var ping <-chan time.Time
	if p.watchdog > 0 {
		tk := time.NewTicker(p.watchdog / 3)
		defer tk.Stop()
		ping = tk.C
	}
	exit := func(ws syscall.WaitStatus) {
		k.c.mu.Lock()
		k.exiting = true
		if k.c.kids[k.name] == k {
			delete(k.c.kids, k.name)
		}
		k.c.mu.Unlock()
		ex := proc.Exit{Pid: k.pid, Status: ws, At: time.Now()}
		k.c.logf("exit %s %d", k.name, ex.Code())
		h.Exited(ex)
	}
	for {
		select {
		case <-k.quit:
			return
		case <-ready:
			ready = nil
			h.Ready("READY")
		case <-done:
			exit(exitStatus(0))
			return
		case <-ping:
			h.Watchdog(false)
		case code := <-k.ctl:
			switch code {
			case -1:
				h.Ready("READY")
				continue
			case -2:
				ping = nil // hung: alive, but no more pings
				continue
			case -3:
				h.Watchdog(true)
				continue
			case -4:
				h.Stopping()
				continue
			case -5:
				h.Reloading(time.Time{})
				continue
			case -6:
				h.MainPID(k.newMainPid())
				continue
			}
			exit(exitStatus(code))
			return
		case s := <-k.sig:
			switch {
			case s == syscall.SIGKILL:
				exit(signalStatus(syscall.SIGKILL))
				return
			case s == syscall.SIGCONT || s == syscall.SIGUSR1 || s == syscall.SIGUSR2 || s == syscall.SIGHUP: // HUP: a reload
			case p.ignoreTerm:
			case stopping == nil:
				stopSig = s
				stopping = time.After(p.stopDelay)
			}
		case <-stopping:
			exit(signalStatus(stopSig))
			return
		}
	}
}
