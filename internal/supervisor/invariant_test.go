package supervisor

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/config"
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
	// Issue 26: dependents of a scheduled oneshot whose stop rule ends
	// every run wait for it for good (1795675501197190016).
	// Issue 27: a rename started while the old name's outgoing incarnation
	// (restart with overlap) still ran.
	// Issue 38: a sidecar restarted in the teardown (KEP-4438) while its
	// dependency was itself stopping (1796222812948690349).
	for _, seed := range []uint64{1795470296466696998, 1795471033844889789, 1795471060740258506, 1795674668837210869, 1795675501197190016, 1796222812948690349} {
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
	minGrace   time.Duration // kube play's options (sidecar, command_first, min_grace)
	watchdog   time.Duration // 0: none; else ready is notify: systemd (driven like log)
	watch      bool          // has watch:, driven by act
}

// term is its own stream (restart.during_termination on kube sidecars), so
// the other draws of a seed stay what they were before it existed.
func genConfig(rng, rules, checks, term *rand.Rand) (string, []chaosProc) {
	n := 2 + rng.IntN(11)
	procs := make([]chaosProc, n)
	var b strings.Builder
	fmt.Fprintf(&b, "shutdown_timeout: %dms\nprocesses:\n", 2000+rng.IntN(15000))
	kube := rng.IntN(3) == 0 // kube play's lifecycle options on some processes
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
		// Every other service restarts with overlap (decided without a
		// draw, so each seed's other events stay what they were).
		overlap := p.typ == config.Service && i%2 == 1
		policy := policies[rng.IntN(len(policies))]
		// Written once sidecar: is drawn (below), which during_termination needs.
		restartLine := fmt.Sprintf("    restart: {policy: %s, backoff: %dms, max_backoff: 3s, limit: %d, overlap: %v%s",
			policy, 50+rng.IntN(1000), rng.IntN(4), overlap, genRules(rules))
		if p.typ == config.Service && policy != "always" && checks.IntN(3) == 0 {
			// Completed, and ready, after a success exit (own stream).
			b.WriteString("    remain_after_exit: true\n")
		}
		if rules.IntN(4) == 0 {
			// watch: the chaos sends the debounced change events itself.
			p.watch = true
			fmt.Fprintf(&b, "    watch: {paths: [/nonexistent/*.go], cascade: %v}\n", rules.IntN(2) == 0)
		}
		if p.typ == config.Oneshot && rules.IntN(3) == 0 {
			// A scheduled oneshot: ticks drive it (own random stream).
			conc := []string{"forbid", "replace"}[rules.IntN(2)]
			fmt.Fprintf(&b, "    schedule: {every: %dms, concurrency: %s}\n", 1000+rules.IntN(6000), conc)
		}
		if p.typ == config.Service {
			switch rng.IntN(3) {
			case 1:
				p.readyKind = "log"
				if rules.IntN(3) == 0 {
					// notify: systemd with a watchdog; readiness comes as
					// for log (the fake child calls Ready), pings too.
					p.watchdog = time.Duration(300+rules.IntN(2000)) * time.Millisecond
					fmt.Fprintf(&b, "    ready: {notify: systemd}\n    watchdog: %dms\n    reload: {signal: HUP}\n", p.watchdog.Milliseconds())
				} else {
					b.WriteString("    ready: {log: READY}\n")
				}
			case 2:
				p.readyKind = "exec"
				// while_stopping (own stream): readiness goes on during stops.
				ws := checks.IntN(3) == 0
				fmt.Fprintf(&b, "    ready: {exec: [probe], start_interval: 100ms, interval: 500ms, failure_threshold: 2, while_stopping: %v}\n", ws)
			}
			if checks.IntN(4) == 0 {
				// A startup check before readiness (kube play's startupProbe
				// on a regular container); with a log readiness too.
				fmt.Fprintf(&b, "    startup: {exec: [startup], start_interval: 100ms, failure_threshold: %d}\n", 1+checks.IntN(3))
			}
			if p.readyKind != "" && rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "    start_timeout: %dms\n", 500+rng.IntN(3000))
			}
			if rng.IntN(4) == 0 {
				p.live = true
				b.WriteString("    live: {exec: [live], interval: 700ms, failure_threshold: 1}\n")
			}
		}
		if p.typ != config.Service && rng.IntN(4) == 0 {
			// A startup check (kube play's startupProbe on a job's container):
			// ready alone, or (own stream) startup with ready as readiness,
			// probed while it stops or not.
			p.readyKind = "exec"
			if checks.IntN(2) == 0 {
				fmt.Fprintf(&b, "    startup: {exec: [startup], start_interval: 100ms, failure_threshold: %d}\n", 1+checks.IntN(3))
				fmt.Fprintf(&b, "    ready: {exec: [probe], start_interval: 100ms, interval: 500ms, failure_threshold: 2, while_stopping: %v}\n", checks.IntN(2) == 0)
				fmt.Fprintf(&b, "    start_timeout: %dms\n", 500+rng.IntN(3000))
			} else {
				fmt.Fprintf(&b, "    ready: {exec: [probe], start_interval: 100ms, interval: 500ms, failure_threshold: 2}\n    start_timeout: %dms\n", 500+rng.IntN(3000))
			}
			if rng.IntN(3) == 0 {
				p.live = true
				b.WriteString("    live: {exec: [live], interval: 700ms, failure_threshold: 1}\n")
			}
		}
		sig := []string{"SIGTERM", "SIGINT"}[rng.IntN(2)]
		stopTimeout := 200 + rng.IntN(4000)
		extra := ""
		if kube && rng.IntN(2) == 0 {
			p.minGrace = time.Duration(100+rng.IntN(2500)) * time.Millisecond
			extra = fmt.Sprintf(", min_grace: %dms", p.minGrace.Milliseconds())
		}
		if rng.IntN(4) == 0 {
			p.hook = time.Duration(1+rng.IntN(6000)) * time.Millisecond
			if kube && rng.IntN(2) == 0 {
				extra += ", command_first: true"
			}
			fmt.Fprintf(&b, "    stop: {signal: %s, timeout: %dms, command: [hook]%s}\n", sig, stopTimeout, extra)
		} else {
			fmt.Fprintf(&b, "    stop: {signal: %s, timeout: %dms%s}\n", sig, stopTimeout, extra)
		}
		if kube && p.typ == config.Service && rng.IntN(2) == 0 {
			b.WriteString("    sidecar: true\n")
			if term.IntN(2) == 0 {
				// KEP-4438: restarted while a regular process still runs
				// in the teardown (termrestart.go).
				restartLine += ", during_termination: true"
			}
		}
		b.WriteString(restartLine + "}\n")
		p.ignoreTerm = rng.IntN(7) == 0
		p.stopDelay = time.Duration(rng.IntN(3000)) * time.Millisecond
	}
	return b.String(), procs
}

// genRules returns ", rules: [...]" for a third of the processes: one or
// two exit-code rules over the codes the chaos exits with, any action
// (shutdown rarer, since it ends the sequence).
func genRules(rng *rand.Rand) string {
	if rng.IntN(3) != 0 {
		return ""
	}
	codes := []int{1, 2, 137, 0}
	rng.Shuffle(len(codes), func(i, j int) { codes[i], codes[j] = codes[j], codes[i] })
	actions := []string{"restart", "stop", "restart-all", "restart", "stop", "restart-all", "shutdown"}
	var rs []string
	for i := range 1 + rng.IntN(2) {
		a := actions[rng.IntN(len(actions))]
		if codes[i] == 0 && (a == "restart" || a == "restart-all") {
			a = "stop" // a success that restarts never settles (a oneshot runs again at every start)
		}
		rs = append(rs, fmt.Sprintf("{exit_codes: {in: [%d]}, action: %s}", codes[i], a))
	}
	return ", rules: [" + strings.Join(rs, ", ") + "]"
}

// --- the scripted world ---

// --- invariants ---

// --- the fake launcher ---
