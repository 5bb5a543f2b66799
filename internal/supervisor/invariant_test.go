package supervisor

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/proc"
)

// The randomized invariant test drives the real loop with random configs
// (DAGs of 2-12 processes, every condition, restart: true edges, every type
// and policy, probes, hooks) and random event sequences (exits with any code,
// readiness and liveness flips, signals, second signals, time jumps), and
// checks invariants at every step, at every signal and at every launch. It
// is seeded and reproducible:
//
//	go test -run TestInvariants ./internal/supervisor/ -invariant.seed=N [-invariant.events=K]   # one sequence, verbose trace
//	PODVISOR_INVARIANT_N=100000 go test -run TestInvariants ./internal/supervisor/   # more (make fuzz)
//
// To add an event or command: add an action in (*chaos).act and, when it
// can legitimately signal or start a process, teach checkSignal/checkLaunch
// why. A seed that fails becomes a regular test: copy its number into
// TestInvariantRegressions.

var invariantSeed = flag.Uint64("invariant.seed", 0, "run only this invariant-test seed, printing its trace")

func invariantCount(t *testing.T) int {
	if s := os.Getenv("PODVISOR_INVARIANT_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("PODVISOR_INVARIANT_N=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() || raceEnabled {
		return 200
	}
	return 2000
}

func TestInvariants(t *testing.T) {
	if *invariantSeed != 0 {
		if err := runInvariantSeed(t, *invariantSeed); err != "" {
			t.Fatal(err)
		}
		return
	}
	n := invariantCount(t)
	base := uint64(time.Now().UnixNano())
	if s := os.Getenv("PODVISOR_INVARIANT_BASE"); s != "" {
		base, _ = strconv.ParseUint(s, 10, 64)
	}
	failed := 0
	for i := range n {
		seed := base + uint64(i)
		if err := runInvariantSeed(t, seed); err != "" {
			t.Errorf("seed %d (rerun: go test -run TestInvariants ./internal/supervisor/ -invariant.seed=%d):\n%s", seed, seed, err)
			if failed++; failed >= 3 {
				break
			}
		}
	}
	t.Logf("%d sequences from base seed %d", n, base)
}

// TestInvariantRegressions replays seeds that once failed.
func TestInvariantRegressions(t *testing.T) {
	// Found by the test while the hardening issue was fixed: a busy loop on a
	// start timeout in teardown; a restart's SIGKILL counted as a teardown
	// kill; a stop begun before the teardown finishing after its hook.
	for _, seed := range []uint64{1795470296466696998, 1795471033844889789, 1795471060740258506} {
		if err := runInvariantSeed(t, seed); err != "" {
			t.Errorf("seed %d:\n%s", seed, err)
		}
	}
}

// runInvariantSeed runs one random sequence in its own synctest bubble and
// returns a description of the first violations, or "".
func runInvariantSeed(t *testing.T, seed uint64) (failure string) {
	failure = runInvariantPrefix(t, seed, -1, *invariantSeed != 0)
	if failure == "" {
		return ""
	}
	// Shrink: the shortest prefix of the seed's events that still fails,
	// so the trace shows only what leads to the violation.
	for k := 0; k < maxActions; k++ {
		if f := runInvariantPrefix(t, seed, k, false); f != "" {
			return fmt.Sprintf("the first %d events suffice (replay: -invariant.seed=%d -invariant.events=%d)\n%s", k, seed, k, f)
		}
	}
	return failure
}

var invariantEvents = flag.Int("invariant.events", -1, "with -invariant.seed: replay only this many random events")

// maxActions bounds the random events of one sequence.
const maxActions = 50

// runInvariantPrefix runs one sequence with at most limit random events (-1:
// as many as the seed draws).
func runInvariantPrefix(t *testing.T, seed uint64, limit int, verbose bool) (failure string) {
	if verbose && *invariantEvents >= 0 {
		limit = *invariantEvents
	}
	t.Run(fmt.Sprint(seed), func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newChaos(seed)
			c.limit = limit
			failure = c.run()
			if verbose {
				t.Logf("config:\n%s\ntrace:\n%s", c.yaml, strings.Join(c.trace, "\n"))
			}
		})
	})
	return failure
}

// --- random configs ---

type chaosProc struct {
	name       string
	typ        config.Type
	readyKind  string // "", "log", "exec"
	live       bool
	ignoreTerm bool
	stopDelay  time.Duration
	hook       time.Duration // 0: no stop.command
}

func genConfig(rng *rand.Rand) (string, []chaosProc) {
	n := 2 + rng.IntN(11)
	procs := make([]chaosProc, n)
	var b strings.Builder
	fmt.Fprintf(&b, "shutdown_timeout: %dms\nprocesses:\n", 2000+rng.IntN(15000))
	for i := range procs {
		p := &procs[i]
		p.name = fmt.Sprintf("p%d", i)
		switch r := rng.IntN(10); {
		case r < 7:
			p.typ = config.Service
		case r < 9:
			p.typ = config.Oneshot
		default:
			p.typ = config.Job
		}
		fmt.Fprintf(&b, "  %s:\n    command: [%s]\n    type: %s\n", p.name, p.name, p.typ)
		var deps []string
		for j := range i {
			if rng.IntN(3) != 0 {
				continue
			}
			conds := []string{"started", "ready"}
			if procs[j].typ != config.Service {
				conds = append(conds, "completed")
			}
			cond := conds[rng.IntN(len(conds))]
			restart := procs[j].typ == config.Service && rng.IntN(2) == 0
			deps = append(deps, fmt.Sprintf("%s: {condition: %s, restart: %v}", procs[j].name, cond, restart))
		}
		if len(deps) > 0 {
			fmt.Fprintf(&b, "    depends_on: {%s}\n", strings.Join(deps, ", "))
		}
		policies := []string{"always", "on-failure", "never"}
		if p.typ != config.Service {
			policies = []string{"on-failure", "never"}
		}
		fmt.Fprintf(&b, "    restart: {policy: %s, backoff: %dms, max_backoff: 3s, limit: %d}\n",
			policies[rng.IntN(len(policies))], 50+rng.IntN(1000), rng.IntN(4))
		if p.typ == config.Service {
			switch rng.IntN(3) {
			case 1:
				p.readyKind = "log"
				b.WriteString("    ready: {log: READY}\n")
			case 2:
				p.readyKind = "exec"
				b.WriteString("    ready: {exec: [probe], start_interval: 100ms, interval: 500ms, failure_threshold: 2}\n")
			}
			if p.readyKind != "" && rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "    start_timeout: %dms\n", 500+rng.IntN(3000))
			}
			if rng.IntN(4) == 0 {
				p.live = true
				b.WriteString("    live: {exec: [live], interval: 700ms, failure_threshold: 1}\n")
			}
		}
		sig := []string{"SIGTERM", "SIGINT"}[rng.IntN(2)]
		stopTimeout := 200 + rng.IntN(4000)
		if rng.IntN(4) == 0 {
			p.hook = time.Duration(1+rng.IntN(6000)) * time.Millisecond
			fmt.Fprintf(&b, "    stop: {signal: %s, timeout: %dms, command: [hook]}\n", sig, stopTimeout)
		} else {
			fmt.Fprintf(&b, "    stop: {signal: %s, timeout: %dms}\n", sig, stopTimeout)
		}
		p.ignoreTerm = rng.IntN(7) == 0
		p.stopDelay = time.Duration(rng.IntN(3000)) * time.Millisecond
	}
	return b.String(), procs
}

// --- the scripted world ---

type chaos struct {
	rng   *rand.Rand
	yaml  string
	next  atomic.Pointer[string] // the config a reload reads
	ops   *rand.Rand             // operator commands draw from here, leaving rng's sequence as it was
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
	killSent   bool
	deadline   time.Time // teardown deadline once seen
	endedAt    time.Time // when Run returned
}

func newChaos(seed uint64) *chaos {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &chaos{rng: rng, ops: rand.New(rand.NewPCG(seed^0x5bd1e995, seed)), procs: map[string]chaosProc{}, kids: map[string]*chaosChild{}, probeOK: map[string]bool{}, pid: 1000, t0: time.Now()}
	var procs []chaosProc
	c.yaml, procs = genConfig(rng)
	c.n = len(procs)
	for _, p := range procs {
		c.procs[p.name] = p
		c.probeOK[p.name+"/ready"] = rng.IntN(2) == 0
		c.probeOK[p.name+"/live"] = true
	}
	// A reload may rename the last process (invariant_ops_test.go).
	last := procs[len(procs)-1]
	renamed := "r" + last.name[1:]
	c.procs[renamed] = chaosProc{name: renamed, typ: last.typ, readyKind: last.readyKind, live: last.live,
		ignoreTerm: last.ignoreTerm, stopDelay: last.stopDelay, hook: last.hook}
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
		if k := c.randomKid(); k != nil && c.procs[k.name].readyKind == "log" {
			c.logf("act: %s prints READY", k.name)
			k.ctl <- -1
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
		d := time.Duration(c.rng.IntN(4000)) * time.Millisecond
		if c.rng.IntN(10) == 0 {
			d = time.Duration(c.rng.IntN(5)) * time.Millisecond // a near-duplicate
		}
		c.logf("act: sleep %v", d)
		time.Sleep(d)
	}
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
		k.ctl <- 0
		synctest.Wait()
	}
	time.Sleep(5 * time.Minute)
	synctest.Wait()
}

// --- invariants ---

// checkStep runs in the loop goroutine after every step.
func (c *chaos) checkStep(now time.Time) {
	s := c.sup
	// The fake clock stands still while the loop runs: thousands of steps
	// at one instant mean the loop spins on a wake-up time in the past.
	if now.Equal(c.stepAt) {
		if c.stepsAt++; c.stepsAt == 10000 {
			c.violate("loop spins: 10000 steps at one instant")
			panic("loop spins; config:\n" + c.yaml + "\ntrace:\n" + strings.Join(c.trace, "\n"))
		}
	} else {
		c.stepAt, c.stepsAt = now, 0
	}
	alive := 0
	for _, r := range s.recs {
		if r.child != nil {
			alive++
		}
		switch r.state {
		case Pending, Backoff, Stopped, Completed, Failed:
			if r.child != nil {
				c.violate("%s is %s with a live child", r.p.Name, r.state)
			}
		case Starting, Running, Stopping:
			if r.child == nil {
				c.violate("%s is %s without a child", r.p.Name, r.state)
			}
		}
		if s.phase == PhaseStopping {
			continue
		}
		if r.state == Backoff && !now.Before(r.due) && !s.restartDependentsAlive(r) && !s.moreStarts && !awaitsStops(r) {
			c.violate("%s still in backoff %v past its due time with its restart allowed", r.p.Name, now.Sub(r.due))
		}
		// A full wave (maxWave) leaves the rest to the next step.
		if r.state == Pending && r.wantStop == intentNone && s.depsHold(r) && !s.moreStarts && !awaitsStops(r) {
			c.violate("%s pending although its dependencies hold", r.p.Name)
		}
		c.checkHeld(r)
	}
	if alive != s.alive {
		c.violate("alive count %d, but %d records have a child", s.alive, alive)
	}
	c.checkWaiters()
	if s.phase == PhaseStopping {
		c.mu.Lock()
		c.deadline = s.deadline
		c.mu.Unlock()
	}
}

// checkSignal runs in the loop goroutine whenever a signal is sent to a
// process group.
func (c *chaos) checkSignal(name string, sig syscall.Signal) {
	s := c.sup
	r := c.rec(name)
	now := time.Now()
	switch {
	case sig == syscall.SIGKILL:
		if s.phase == PhaseStopping { // SPEC: exit 1 when teardown had to SIGKILL
			c.mu.Lock()
			c.killSent = true
			c.mu.Unlock()
		}
		allowed := !now.Before(r.due) || s.phase == PhaseStopping && !now.Before(s.deadline) || s.killingAll
		if !allowed {
			c.violate("SIGKILL to %s before its stop timeout, the deadline or a second signal", name)
		}
	case sig == r.p.Stop.Signal:
		// A stop begun before the teardown (a restart's, whose hook was
		// still running) finishes as it began: it waited only for its
		// restart: true dependents.
		if s.phase == PhaseStopping && r.intent == intentNone {
			for _, d := range r.dependents {
				if dr := s.recs[d]; dr.child != nil {
					c.violate("%s signalled in teardown while its dependent %s is alive (%s)", name, dr.p.Name, dr.state)
				}
			}
		} else if s.phase != PhaseStopping {
			if r.intent == intentHold || r.intent == intentRemove {
				for _, d := range r.dependents {
					if dr := s.recs[d]; dr.child != nil {
						c.violate("%s stopped by podvisor stop/reload while its dependent %s is alive (%s)", name, dr.p.Name, dr.state)
					}
				}
			}
			for _, d := range r.restartDeps {
				if dr := s.recs[d]; dr.child != nil {
					c.violate("%s signalled while its restart: true dependent %s is alive (%s)", name, dr.p.Name, dr.state)
				}
			}
		}
	}
}

// checkLaunch runs when a process is launched (in the loop's goroutine or a
// launch goroutine of its wave, while the loop waits for the wave).
func (c *chaos) checkLaunch(name string) {
	s := c.sup
	r := s.byName[name]
	c.checkRename(name)
	if s.phase == PhaseStopping {
		c.violate("%s started during teardown", name)
	}
	if r.held {
		c.violate("%s started while stopped by podvisor stop", name)
	}
	for _, d := range r.deps {
		if dr := s.recs[d.idx]; !s.holds(dr, d.cond) {
			c.violate("%s started while %s does not hold %s (state %s)", name, dr.p.Name, d.cond, dr.state)
		}
	}
}

// checkQuiescent runs after the chaos settled: every process is where it
// can stay.
func (c *chaos) checkQuiescent() {
	snap := c.sup.Snapshot()
	blocked := map[string]bool{}
	for _, p := range snap.Processes {
		if p.State == "stopped" || p.State == "failed" {
			blocked[p.Name] = true
		}
	}
	// A pending process may wait forever only behind a dependency that
	// will not come back by itself.
	for changed := true; changed; {
		changed = false
		for _, p := range snap.Processes {
			if p.State != "pending" || blocked[p.Name] {
				continue
			}
			for _, w := range p.WaitingFor {
				dep, _, _ := strings.Cut(w, ":")
				if blocked[dep] {
					blocked[p.Name], changed = true, true
				}
			}
		}
	}
	for _, p := range snap.Processes {
		switch p.State {
		case "running", "completed", "stopped", "failed":
		case "pending":
			if !blocked[p.Name] {
				c.violate("%s still pending after settling, waiting for %v", p.Name, p.WaitingFor)
			}
		default:
			c.violate("%s is %s after settling", p.Name, p.State)
		}
	}
}

func (c *chaos) checkOutcome(o Outcome) {
	c.mu.Lock()
	deadline, killed, now := c.deadline, c.killSent, c.endedAt
	c.mu.Unlock()
	c.logf("outcome: %+v exit %d", o, o.ExitCode())
	if !deadline.IsZero() && now.After(deadline.Add(groupPoll)) && !killed {
		c.violate("teardown ended %v after its deadline without SIGKILL", now.Sub(deadline))
	}
	if !deadline.IsZero() && now.After(deadline.Add(finalGrace+groupPoll)) {
		c.violate("teardown ended %v after shutdown_timeout", now.Sub(deadline))
	}
	if o.Killed != killed {
		c.violate("outcome.Killed=%v but SIGKILL sent=%v", o.Killed, killed)
	}
	snap := c.sup.Snapshot()
	switch o.Reason {
	case ReasonJobsDone:
		for _, p := range snap.Processes {
			if p.Type == "job" && p.State != "completed" {
				c.violate("jobs done, but job %s is %s", p.Name, p.State)
			}
		}
	case ReasonFatal:
		found := false
		for _, p := range snap.Processes {
			found = found || p.Name == o.Process && p.State == "failed"
		}
		if !found {
			c.violate("fatal outcome names %q, which is not failed", o.Process)
		}
		if o.ExitCode() == 0 {
			c.violate("fatal outcome exits 0")
		}
	case ReasonSignal:
		if want := map[bool]int{false: 0, true: 1}[killed]; o.ExitCode() != want {
			c.violate("signal teardown exits %d, want %d", o.ExitCode(), want)
		}
	}
	for _, p := range snap.Processes {
		if p.Up {
			c.violate("%s still up after Run returned", p.Name)
		}
	}
}

// --- the fake launcher ---

type chaosChild struct {
	c       *chaos
	name    string
	pid     int
	ctl     chan int // exit code >= 0, or -1: print the ready line
	sig     chan syscall.Signal
	quit    chan struct{}
	exiting bool // guarded by c.mu
}

func (k *chaosChild) Pid() int { return k.pid }

func (k *chaosChild) Signal(sig syscall.Signal) error {
	k.c.checkSignal(k.name, sig)
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
	which := "/ready"
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
		case code := <-k.ctl:
			if code < 0 {
				h.Ready("READY")
				continue
			}
			exit(exitStatus(code))
			return
		case s := <-k.sig:
			switch {
			case s == syscall.SIGKILL:
				exit(signalStatus(syscall.SIGKILL))
				return
			case s == syscall.SIGCONT || s == syscall.SIGUSR1 || s == syscall.SIGUSR2:
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
