package proc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reaper is the single waiter for every child of the process. See the package
// documentation for the locking contract.
type Reaper struct {
	log *slog.Logger

	spawnOnce sync.Once
	sp        *Spawners // see spawners; set before the first spawn

	// mu keeps reaping and spawning apart. Spawns hold it for reading
	// across fork+exec+register (several spawner threads may do so at
	// once); reap holds it for writing across wait4+lookup, so it can never
	// reap a child before the child is registered. Signal holds it for
	// reading, so a registered leader cannot be reaped mid-signal.
	mu sync.RWMutex
	// mapMu guards children among holders of mu's read lock; reap, holding
	// the write lock, needs no more.
	mapMu    sync.Mutex
	children map[int]*entry

	// adjMu keeps spawns apart from a spawn that changes podvisor's own
	// oom_score_adj or hard limits for its fork (see withOOMScoreAdj).
	adjMu sync.RWMutex

	orphans   atomic.Uint64
	fullReaps atomic.Uint64 // wait4(-1) passes (for tests: reaping is by pid)

	kickMu sync.Mutex
	w      *waiter // the running waiter (see Run), for kickWaiter
}

// entry is one registered, not yet reaped child.
type entry struct {
	exit   chan Exit  // buffered 1: receives exactly one Exit
	onExit func(Exit) // Spec.OnExit, may be nil
}

// NewReaper returns a Reaper. It has no side effects until Start or Run is
// called; its spawner threads start with its first spawn. log may be nil.
func NewReaper(log *slog.Logger) *Reaper {
	return NewReaperWith(log, nil)
}

// NewReaperWith returns a Reaper that forks on sp, spawner threads started
// earlier (nil: its own, started at its first spawn). No two Reapers may
// share sp.
func NewReaperWith(log *slog.Logger, sp *Spawners) *Reaper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reaper{log: log, sp: sp, children: make(map[int]*entry)}
}

// spawners returns the spawner threads, set up; the first call starts them
// if need be and logs what their set-up had to do without.
func (r *Reaper) spawners() *Spawners {
	r.spawnOnce.Do(func() {
		if r.sp == nil {
			r.sp = StartSpawners()
		}
		first := r.sp.waitFirst()
		r.logNotes(first)
		// The rest of the pool's notes (say, a thread that could not clear
		// its signal mask) as soon as the whole pool is up.
		go func() { r.logNotes(r.sp.wait(len(first))) }()
	})
	return r.sp
}

func (r *Reaper) logNotes(notes []setupNote) {
	for _, n := range notes {
		if n.debug {
			r.log.Debug(n.msg, "reason", n.err)
		} else {
			r.log.Warn(n.msg, "err", n.err)
		}
	}
}

// Orphans returns how many unknown children (orphaned descendants reparented to
// podvisor) Run has reaped.
func (r *Reaper) Orphans() uint64 { return r.orphans.Load() }

// Start starts cmd and registers its pid. The returned channel receives exactly
// one Exit once Run reaps the child. Start works whether or not Run is running.
//
// cmd must not need Wait: it must not come from exec.CommandContext and its
// Stdin, Stdout and Stderr must each be nil or an *os.File (otherwise os/exec
// would start copy goroutines that only Wait collects). cmd.Path must be
// resolved (exec.Command does that). cmd.Process stays nil: the pid is in
// Exit.Pid, or use Spawn, whose Child records it.
func (r *Reaper) Start(cmd *exec.Cmd) (<-chan Exit, error) {
	if err := needsNoWait(cmd); err != nil {
		return nil, err
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	_, e, err := r.startCmd(cmd, nil, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	return e.exit, nil
}

// startCmd forks and execs cmd on a spawner thread with mu held and
// registers the child before releasing it. oomScoreAdj and raise (hard
// limits above podvisor's own) are podvisor's own for the fork only.
// cg, if not nil, is a v1 cgroup the spawner thread enters just before
// the fork (Spec.Cgroup, spawnThread.enter); without one the thread forks
// from podvisor's own cgroups.
func (r *Reaper) startCmd(cmd *exec.Cmd, oomScoreAdj *int, raise []Rlimit, onExit func(Exit), cg Cgroup) (int, *entry, error) {
	sp := r.spawners()
	q, err := sp.request(cmd)
	if err != nil {
		return 0, nil, err
	}
	var (
		pid int
		e   *entry
	)
	sp.run(func(t *spawnThread) {
		err = r.withOOMScoreAdj(oomScoreAdj, len(raise) > 0, func() error {
			if cg == nil {
				t.home()
			} else {
				settle, err := t.enter(cg)
				if err != nil {
					return &SpawnError{Reason: "cannot enter its cgroup: " + errText(err), Err: err}
				}
				defer settle()
			}
			return r.withHardLimits(raise, func() error {
				r.mu.RLock()
				defer r.mu.RUnlock()
				p, err := sp.forkExec(q, t.private)
				if err != nil {
					return err
				}
				pid = p
				e = &entry{exit: make(chan Exit, 1), onExit: onExit}
				r.mapMu.Lock()
				r.children[pid] = e
				r.mapMu.Unlock()
				return nil
			})
		})
	})
	runtime.KeepAlive(cmd) // its files must stay open until the fork is done
	if err == nil {
		r.kickWaiter()
	}
	return pid, e, err
}

func needsNoWait(cmd *exec.Cmd) error {
	if cmd.Cancel != nil || cmd.WaitDelay != 0 {
		return errors.New("proc: command uses a context or WaitDelay, which need exec.Cmd.Wait")
	}
	for _, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		switch s.(type) {
		case nil, *os.File:
		default:
			return fmt.Errorf("proc: command stdio of type %T needs exec.Cmd.Wait; pass an *os.File", s)
		}
	}
	return nil
}

// Run reaps children until ctx is done: once at start (children that exited
// before Run began), then whenever one is waitable. Managed children get their
// Exit; unknown ones are counted as orphans. Run returns after ctx is done.
//
// The reaping is done by a second goroutine, the waiter, which blocks in
// waitid(WNOWAIT): the kernel wakes it directly when a child becomes waitable
// and says which child it is. SIGCHLD costs several hand-offs per exit (the
// runtime's signal handler, os/signal's goroutine, a wake-up with nothing new
// to reap), so it is listened to only while podvisor has no children at all
// (see waiter.idle). Run itself only waits for ctx: waitid cannot be
// interrupted, and Run must return once ctx is done.
//
// perf: the waiter reaps the child waitid named with wait4(pid), which the
// kernel answers without looking at the other children. wait4(-1) walks
// every child up to the first zombie, and the WNOHANG call that ends a reap
// loop walks them all: with N children stopping, several walks of up to N
// per exit (a quarter of podvisor's CPU in a stop of 1,000, quadratic in N),
// with the lock that spawns and signals wait for held meanwhile. waitid's
// own walk is the one left. Reaping on the waiter, not handing each exit to
// another goroutine and back, saves two goroutine switches per exit.
func (r *Reaper) Run(ctx context.Context) {
	r.reap()
	r.startWaiter(ctx)
	<-ctx.Done()
}

// waiter is the goroutine that waits in waitid and reaps.
type waiter struct {
	kick   chan struct{} // a new child after ECHILD
	idling atomic.Bool   // in idle's select (for tests)
}

func (r *Reaper) startWaiter(ctx context.Context) *waiter {
	w := &waiter{kick: make(chan struct{}, 1)}
	r.kickMu.Lock()
	r.w = w
	r.kickMu.Unlock()
	go func() {
		for {
			var info unix.Siginfo
			// WNOWAIT: the reap itself is done under r.mu (reapPid), so
			// that a child is never reaped before it is registered.
			err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				// ECHILD: no children. Wait for a spawn or a SIGCHLD
				// before looking again.
				if !w.idle(ctx) {
					return
				}
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if !r.reapPid(int(siginfoPid(&info))) {
				r.reap() // not reapable by pid after all: look at every child
			}
		}
	}()
	return w
}

// idle waits while podvisor has no children, for a spawn (kick) or a
// SIGCHLD: a process podvisor did not start can still become its child and
// exit (as PID 1, one that `kubectl exec` left behind, reparented when its
// parent died). Without children nothing else can: orphans of podvisor's own
// tree are reparented while their parent, podvisor's child, still counts. It
// returns false when ctx is done.
func (w *waiter) idle(ctx context.Context) bool {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	// A child that came and went before Notify sent its SIGCHLD unseen.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		return true
	}
	w.idling.Store(true)
	defer w.idling.Store(false)
	select {
	case <-ctx.Done():
		return false
	case <-w.kick:
	case <-sigs:
	}
	return true
}

// kickWaiter tells Run's waiter that a child was just registered.
func (r *Reaper) kickWaiter() {
	r.kickMu.Lock()
	w := r.w
	r.kickMu.Unlock()
	if w != nil {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// reap collects every exited child: it loops until wait4 reports nothing
// left.
func (r *Reaper) reap() {
	r.fullReaps.Add(1)
	var orphans []Exit
	var calls []exitCall
	r.mu.Lock()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || pid <= 0 { // ECHILD: no children; 0: none exited
			if err != nil && !errors.Is(err, unix.ECHILD) {
				r.mu.Unlock()
				r.log.Error("wait4 failed", "err", err)
				return
			}
			break
		}
		calls, orphans = r.reaped(pid, ws, calls, orphans)
	}
	r.mu.Unlock()
	r.deliver(calls, orphans)
}

// reapPid reaps pid, which the waiter saw waitable; false if wait4 did not
// reap it (it was not waitable by the time, or not a child of ours).
func (r *Reaper) reapPid(pid int) bool {
	if pid <= 0 {
		return false
	}
	var ws unix.WaitStatus
	r.mu.Lock()
	got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	for errors.Is(err, unix.EINTR) {
		got, err = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
	if err != nil || got != pid {
		r.mu.Unlock()
		return false
	}
	calls, orphans := r.reaped(pid, ws, nil, nil)
	r.mu.Unlock()
	r.deliver(calls, orphans)
	return true
}

// exitCall is a Spec.OnExit to call once the lock is released.
type exitCall struct {
	f  func(Exit)
	ex Exit
}

// reaped records the reaped pid: its Exit to its entry, or an orphan. The
// caller holds r.mu for writing.
func (r *Reaper) reaped(pid int, ws unix.WaitStatus, calls []exitCall, orphans []Exit) ([]exitCall, []Exit) {
	ex := Exit{Pid: pid, Status: syscall.WaitStatus(ws), At: time.Now()}
	e, ok := r.children[pid]
	if !ok {
		r.orphans.Add(1)
		return calls, append(orphans, ex)
	}
	delete(r.children, pid)
	e.exit <- ex
	if e.onExit != nil {
		calls = append(calls, exitCall{e.onExit, ex})
	}
	return calls, orphans
}

// deliver runs the exit hooks and logs the orphans, outside the lock (a
// hook or the logger may be slow).
func (r *Reaper) deliver(calls []exitCall, orphans []Exit) {
	for _, c := range calls {
		c.f(c.ex)
	}
	for _, ex := range orphans {
		r.log.Debug("reaped orphan", "pid", ex.Pid, "code", ex.Code())
	}
}

// registered reports whether e is still the live registration of pid. The
// caller holds r.mu for reading.
func (r *Reaper) registered(pid int, e *entry) bool {
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	return r.children[pid] == e
}

// siginfoPid is si_pid of a waitid result: the first field of the union
// that follows si_signo, si_errno and si_code, aligned to a pointer
// (x/sys/unix leaves it unnamed). A wrong value costs only a full reap.
func siginfoPid(info *unix.Siginfo) int32 {
	const ptr = unsafe.Sizeof(uintptr(0))
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), (12+ptr-1)&^(ptr-1)))
}
