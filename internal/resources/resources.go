// Package resources measures what each supervised process uses, summed over
// its whole tree: the process group it leads and every descendant found
// through /proc, daemonized ones included. It is read on demand (a scrape, a
// status call) and never polls: an idle podvisor does no /proc work at all.
//
// Attribution of one /proc walk, per pid:
//   - a member of a supervised process group belongs to that process;
//   - otherwise a descendant belongs to whatever its parent belongs to;
//   - an orphan reparented to podvisor (it is a subreaper, or PID 1) whose
//     stdout or stderr is still the output pipe of a supervised process
//     belongs to that process (a daemon that kept podvisor's pipes);
//   - a process once attributed keeps its owner for as long as it lives
//     (pid and start time), so a double fork after an earlier walk is not
//     lost either.
package resources

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// Usage is what one supervised process uses, summed over its tree.
type Usage struct {
	// CPUSeconds is user+system of live members and of the children they
	// reaped, plus members gone since an earlier walk that no member
	// reaped (a daemon podvisor reaped, a descendant whose parent died):
	// it never decreases while the process runs.
	CPUSeconds float64
	RSSBytes   uint64 // resident set size; shared pages count once per member
	OpenFDs    int
	Threads    int
	Processes  int // members counted
}

// Root is one supervised process: its name and the pid of its group leader
// (which is also the process group id).
type Root struct {
	Name string
	Pid  int
}

// Sampler walks /proc on demand and caches the result for MaxAge, so that a
// burst of scrapes and status calls costs one walk. It is safe for concurrent
// use; a walk holds the lock, so concurrent callers wait for its result
// instead of walking again.
type Sampler struct {
	maxAge time.Duration
	self   int
	proc   string // "/proc"; a test may point elsewhere

	mu      sync.Mutex
	at      time.Time
	key     string
	usage   map[string]Usage
	sticky  map[procID]string
	walks   int
	scratch walker

	// CPU time is a counter: it never decreases while a process runs
	// (walk_linux.go). members is the last walk's members; reaped the
	// ticks of members gone since without a member parent to reap them
	// (into its cutime); shown the last total given out. Keyed by
	// incarnation, so a restarted process starts from its own figures.
	members map[procID]member
	reaped  map[rootID]uint64
	shown   map[rootID]uint64

	cgroups CgroupSource // nil: the walk's figures only
}

// CgroupSource gives a process's memory and CPU time from its own cgroup,
// exact for its whole tree, escaped daemons included; ok is false for a
// process without one, cpuOK false where the cgroup counts its memory
// only (a v1 group without cpuacct; internal/launch's Cgroups).
type CgroupSource func(name string) (cpuSeconds float64, cpuOK bool, memoryBytes uint64, ok bool)

// UseCgroups makes the figures of processes in a cgroup of their own come
// from it; the /proc walk still counts their fds, threads and members.
func (s *Sampler) UseCgroups(src CgroupSource) {
	s.mu.Lock()
	s.cgroups = src
	s.mu.Unlock()
}

// fromCgroups replaces the walk's memory and CPU where a cgroup knows them.
func (s *Sampler) fromCgroups(usage map[string]Usage) {
	if s.cgroups == nil {
		return
	}
	for name, u := range usage {
		if cpu, cpuOK, mem, ok := s.cgroups(name); ok {
			u.RSSBytes = mem
			if cpuOK {
				u.CPUSeconds = cpu
			}
			usage[name] = u
		}
	}
}

type procID struct {
	pid   int
	start uint64
}

// rootID is one incarnation of a supervised process.
type rootID struct {
	name string
	pid  int
}

// member is what a walk saw of one member of a tree.
type member struct {
	root  rootID
	ppid  int
	ticks uint64 // utime+stime+cutime+cstime
}

// New returns a Sampler whose results are reused for maxAge. self is
// podvisor's own pid (orphans are reparented to it).
func New(self int, maxAge time.Duration) *Sampler {
	return &Sampler{maxAge: maxAge, self: self, proc: "/proc", sticky: map[procID]string{},
		members: map[procID]member{}, reaped: map[rootID]uint64{}, shown: map[rootID]uint64{}}
}

// Sample returns the usage of every root whose tree has at least one live
// member, keyed by name. The map must not be modified.
func (s *Sampler) Sample(roots []Root) map[string]Usage {
	return s.sampleAt(roots, time.Now())
}

func (s *Sampler) sampleAt(roots []Root, now time.Time) map[string]Usage {
	key := rootsKey(roots)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usage != nil && key == s.key && now.Sub(s.at) < s.maxAge && now.Sub(s.at) >= 0 {
		return s.usage
	}
	s.usage = s.walk(roots)
	s.fromCgroups(s.usage)
	s.at, s.key = now, key
	s.walks++
	return s.usage
}

// Walks returns how many /proc walks have been made.
func (s *Sampler) Walks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.walks
}

func rootsKey(roots []Root) string {
	var b strings.Builder
	for _, r := range roots {
		b.WriteString(r.Name)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(r.Pid))
		b.WriteByte(';')
	}
	return b.String()
}
