package proc

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Spawners is the pool of threads every fork runs on.
//
// A spawner is a goroutine locked to an OS thread whose signal mask is empty.
// Go's fork child restores the forking thread's mask, so children forked
// there start with an empty mask even if podvisor inherited blocked signals.
// Each thread also forks from a private fd table (fdtable_linux.go). The
// goroutine never returns: if it did, the locked thread would exit and the
// kernel would send every child spawned with a Pdeathsig its death signal.
//
// Setting the threads up takes a millisecond or more (thread creation, an
// unshare, a look at the fd table each). podvisor run starts them with
// StartSpawners while it parses its config, so the first child does not wait
// for them; a Reaper made by NewReaper starts its own at its first spawn.
type Spawners struct {
	n     int
	reqs  chan func(t *spawnThread)
	ready chan struct{} // closed once every thread is set up
	first chan struct{} // closed once one thread is set up and takes requests
	once  sync.Once
	fdt   fdTables
	// nullErr: why /dev/null could not be opened (every spawn fails).
	nullErr error

	mu    sync.Mutex
	notes []setupNote // what the set-up had to do without, see wait
}

// setupNote is one thing a spawner's set-up could not do. The pool has no
// logger (it starts before podvisor's log is configured); the Reaper that
// uses it logs the notes at its first spawn.
type setupNote struct {
	debug bool // a slower path, not a risk to children
	msg   string
	err   error
}

// spawnerCount is how many spawner threads to start. A fork holds its P
// until the child has exec'd (the vfork-style clone runs with the runtime's
// scheduler paused for that thread), so more spawners than Ps add only
// hand-offs between threads: 4 spawners on 2 Ps cost a start of 1,000
// children 12% more of podvisor's CPU than 2 (BENCHMARKS.md).
func spawnerCount() int {
	return max(1, min(4, runtime.GOMAXPROCS(0)))
}

// StartSpawners starts the spawner threads in the background and returns at
// once. Call it after Sanitize: the threads take their signal state then.
func StartSpawners() *Spawners {
	p := &Spawners{n: spawnerCount(), reqs: make(chan func(t *spawnThread)), ready: make(chan struct{}), first: make(chan struct{})}
	go p.start()
	return p
}

func (p *Spawners) start() {
	p.prepareFDTables()
	var wg sync.WaitGroup
	for range p.n {
		wg.Add(1)
		go p.thread(func() {
			p.once.Do(func() { close(p.first) })
			wg.Done()
		})
	}
	wg.Wait()
	close(p.ready)
}

// waitFirst blocks until one thread takes requests and returns the set-up
// notes so far: the first spawn need not wait for the whole pool (a
// podvisor of one process starts it a few hundred microseconds sooner).
func (p *Spawners) waitFirst() []setupNote {
	<-p.first
	return p.notesFrom(0)
}

// wait blocks until every thread is set up and returns the set-up notes
// from the from-th on.
func (p *Spawners) wait(from int) []setupNote {
	<-p.ready
	return p.notesFrom(from)
}

func (p *Spawners) notesFrom(from int) []setupNote {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notes[min(from, len(p.notes)):])
}

func (p *Spawners) note(debug bool, msg string, err error) {
	p.mu.Lock()
	p.notes = append(p.notes, setupNote{debug, msg, err})
	p.mu.Unlock()
}

// spawnThread is what a spawner thread's requests see of it.
type spawnThread struct {
	private bool // its fd table is its own
	// away is the v1 cgroup the thread is still in after its last fork
	// (Cgroup.Enter), nil when it is in podvisor's own cgroups.
	away Cgroup
}

// enter moves the thread into cg (v1) for a fork, from podvisor's own
// cgroups or, directly, from the group of the thread's last fork; settle
// is called once the fork is done. The thread stays in cg afterwards: the
// next fork on it moves it on, any other request or an idle thread takes
// it home (thread, home).
//
// perf: a start in a burst makes one move, not a move in and a move back
// (docs/BENCHMARKS.md section 32).
func (t *spawnThread) enter(cg Cgroup) (func(), error) {
	if t.away != nil && t.away.Homes() != cg.Homes() {
		t.home() // in controllers cg is not in: they must be left too
	}
	t.away = nil
	limit, err := cg.Enter() // gone home itself on an error
	if err != nil {
		return nil, err
	}
	if !cg.Stay() {
		return func() { limit(); cg.Home() }, nil
	}
	t.away = cg
	return limit, nil
}

// home moves the thread back into podvisor's own cgroups if it is away.
func (t *spawnThread) home() {
	if t.away != nil {
		t.away.Home()
		t.away = nil
	}
}

// run runs f on a spawner thread and waits for it to return.
func (p *Spawners) run(f func(t *spawnThread)) {
	done := make(chan struct{})
	p.reqs <- func(t *spawnThread) { defer close(done); f(t) }
	<-done
}

func (p *Spawners) thread(ready func()) {
	runtime.LockOSThread()
	if p.fdt.self >= 0 && unix.Gettid() == os.Getpid() {
		// The main thread's table is the one pidfd_getfd reads and
		// /proc/self/fd shows: it must stay podvisor's main table. A
		// fresh goroutine takes this one's place, on another thread
		// once this one has let the main thread go.
		runtime.UnlockOSThread()
		go p.thread(ready)
		return
	}
	// Never unlocked, see Spawners.
	var empty unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, nil); err != nil {
		p.note(false, "cannot clear the spawner thread's signal mask; children may inherit blocked signals", err)
	}
	if err := closeOnExecAll(); err != nil {
		p.note(false, "cannot mark inherited file descriptors close-on-exec; children may inherit them", err)
	}
	t := &spawnThread{private: p.unshareFDTable()} // after closeOnExecAll: the copy keeps its flags
	ready()
	idle := time.NewTimer(lingerFor)
	for {
		var f func(*spawnThread)
		if t.away != nil {
			// Still in the last child's cgroup: on to the next spawn if
			// one comes soon, home otherwise (the child's pids.max counts
			// the thread, and its group can be removed only once the
			// thread is out).
			idle.Reset(lingerFor)
			select {
			case f = <-p.reqs:
				idle.Stop()
			case <-idle.C:
				t.home()
				f = <-p.reqs
			}
		} else {
			f = <-p.reqs
		}
		f(t)
	}
}

// lingerFor is how long a spawner thread stays in the v1 cgroup of the
// child it forked last, for a next spawn to move it on from there. In a
// burst of starts the next spawn comes within it; a thread that stays
// costs its child one of its pids.max meanwhile (docs/resources.md).
const lingerFor = 2 * time.Millisecond

// closeOnExecAll marks every fd from 3 up close-on-exec. Go opens its own fds
// that way, but podvisor may have inherited fds without the flag from a careless
// parent (a shell, a CI runner), and those would leak into every child (B20).
// Fds passed on purpose (Spec.NotifyFile, exec.Cmd.ExtraFiles) are unaffected:
// the fork child dup2s them into place, which clears the flag.
func closeOnExecAll() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil || (!errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL)) {
		return err
	}
	// Before Linux 5.11: one fd at a time.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// EBADF: the fd of the directory listing itself, closed by now.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("fd %d: %w", fd, err)
		}
	}
	return nil
}
