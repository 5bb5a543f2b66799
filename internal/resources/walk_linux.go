package resources

import (
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc/<pid>/stat. The
// kernel fixes it at 100 on every architecture Go supports.
const clockTicks = 100

// pfKthread is PF_KTHREAD in /proc/<pid>/stat flags.
const pfKthread = 0x00200000

// pstat is the part of /proc/<pid>/stat a walk needs.
type pstat struct {
	pid, ppid, pgrp int
	flags           uint64
	ticks           uint64 // utime+stime+cutime+cstime
	ownTicks        uint64 // utime+stime
	threads         int
	start           uint64
	vsize           uint64
	rssPages        uint64
}

// walker holds buffers reused from walk to walk (under Sampler.mu).
type walker struct {
	buf   []byte
	dents []byte
	pids  []int
	stats []pstat
	index map[int]int // pid -> position in stats
	owner map[int]int // pid -> root index, -1 for none
}

// walk reads /proc once and sums each root's tree.
func (s *Sampler) walk(roots []Root) map[string]Usage {
	w := &s.scratch
	if !w.readAll(s.proc, s.self) {
		return map[string]Usage{}
	}
	s.assignOwners(w, roots)
	sums, ticks := s.sum(w, roots)
	return s.figures(roots, sums, ticks)
}

// readAll reads the stat of every process in /proc but podvisor and kernel
// threads into w.stats.
func (w *walker) readAll(proc string, self int) bool {
	if w.buf == nil {
		w.buf = make([]byte, 4096)
		w.dents = make([]byte, 8192)
		w.index = map[int]int{}
		w.owner = map[int]int{}
	}
	clear(w.index)
	clear(w.owner)
	w.stats = w.stats[:0]

	pids, err := w.readPids(proc)
	if err != nil {
		return false
	}
	for _, pid := range pids {
		if pid == self {
			continue
		}
		st, ok := w.readStat(proc, pid)
		if !ok || st.flags&pfKthread != 0 {
			continue
		}
		w.index[pid] = len(w.stats)
		w.stats = append(w.stats, st)
	}
	return true
}

// assignOwners fills w.owner: for each process, the index of the root
// whose tree it is in, or -1.
func (s *Sampler) assignOwners(w *walker, roots []Root) {
	byPgid := make(map[int]int, len(roots))
	for i, r := range roots {
		if r.Pid > 0 {
			byPgid[r.Pid] = i
		}
	}
	var pipes map[uint64]int // pipe inode -> root index, built on first orphan
	attribute := func(st pstat) int {
		if i, ok := byPgid[st.pgrp]; ok {
			return i
		}
		if name, ok := s.sticky[procID{st.pid, st.start}]; ok {
			for i, r := range roots {
				if r.Name == name {
					return i
				}
			}
		}
		if st.ppid == s.self {
			if pipes == nil {
				pipes = w.rootPipes(s.proc, roots)
			}
			return w.pipeOwner(s.proc, st.pid, pipes)
		}
		return -2 // ask the parent
	}

	// Resolve owners iteratively: a chain is followed up to a known owner,
	// then every pid on it gets that owner.
	var chain []int
	for _, st := range w.stats {
		if _, done := w.owner[st.pid]; done {
			continue
		}
		chain = chain[:0]
		cur := st
		owner := -1
		for {
			if o, done := w.owner[cur.pid]; done {
				owner = o
				break
			}
			chain = append(chain, cur.pid)
			o := attribute(cur)
			if o != -2 {
				owner = o
				break
			}
			j, ok := w.index[cur.ppid]
			if !ok || len(chain) > len(w.stats) {
				break // parent outside this namespace, podvisor, or gone
			}
			cur = w.stats[j]
		}
		for _, pid := range chain {
			w.owner[pid] = owner
		}
	}
}

// sum adds up each root's processes, and records who was a member of which
// tree for the next walk.
func (s *Sampler) sum(w *walker, roots []Root) (sums []Usage, ticks []uint64) {
	sums = make([]Usage, len(roots))
	ticks = make([]uint64, len(roots))
	live := make(map[procID]string, len(s.sticky))
	members := make(map[procID]member, len(s.members))
	memberOf := make(map[int]rootID, len(s.members)) // pid -> incarnation
	page := uint64(os.Getpagesize())
	for _, st := range w.stats {
		i := w.owner[st.pid]
		if i < 0 {
			continue
		}
		u := &sums[i]
		u.Processes++
		ticks[i] += st.ticks
		u.RSSBytes += st.rssPages * page
		u.Threads += st.threads
		u.OpenFDs += w.countFDs(s.proc, st.pid)
		id := procID{st.pid, st.start}
		live[id] = roots[i].Name
		rid := rootID{roots[i].Name, roots[i].Pid}
		members[id] = member{root: rid, ppid: st.ppid, ticks: st.ticks}
		memberOf[st.pid] = rid
	}
	s.sticky = live
	// A member gone since the last walk: if its parent is still a member
	// of the same tree, the parent reaped it and its cutime holds the
	// member's time; otherwise (podvisor reaped it, or its parent is gone
	// too) its last figure is kept, or the counter would go down.
	for id, m := range s.members {
		if _, ok := members[id]; ok {
			continue
		}
		if memberOf[m.ppid] != m.root {
			s.reaped[m.root] += m.ticks
		}
	}
	s.members = members
	return sums, ticks
}

// figures are each root's usage, its CPU time never below what was shown;
// it forgets the roots that are gone.
func (s *Sampler) figures(roots []Root, sums []Usage, ticks []uint64) map[string]Usage {
	current := make(map[rootID]bool, len(roots))
	out := make(map[string]Usage, len(roots))
	for i, r := range roots {
		rid := rootID{r.Name, r.Pid}
		current[rid] = true
		if sums[i].Processes == 0 {
			continue
		}
		// Never below what was shown: a member auto-reaped by a member
		// parent that ignores SIGCHLD adds nothing to its cutime.
		t := max(ticks[i]+s.reaped[rid], s.shown[rid])
		s.shown[rid] = t
		sums[i].CPUSeconds = float64(t) / clockTicks
		out[r.Name] = sums[i]
	}
	for rid := range s.reaped {
		if !current[rid] {
			delete(s.reaped, rid)
		}
	}
	for rid := range s.shown {
		if !current[rid] {
			delete(s.shown, rid)
		}
	}
	return out
}

// readPids lists the numeric entries of the /proc directory without
// allocating a name per entry.
func (w *walker) readPids(dir string) ([]int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	pids := w.pids[:0]
	for {
		n, err := unix.Getdents(fd, w.dents)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil, err
		}
		if n <= 0 {
			w.pids = pids
			return pids, nil
		}
		for off := 0; off+19 <= n; {
			reclen := int(w.dents[off+16]) | int(w.dents[off+17])<<8
			if reclen == 0 {
				break
			}
			name := w.dents[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if pid, ok := atou(name); ok && pid > 0 {
				pids = append(pids, int(pid))
			}
			off += reclen
		}
	}
}

// atou parses a decimal number without allocating.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// atoi is atou for numbers that may be negative (a ppid or pgrp of -1 is
// not possible, but field 9's neighbours are signed in the kernel).
func atoi(b []byte) int {
	if len(b) > 0 && b[0] == '-' {
		v, _ := atou(b[1:])
		return -int(v)
	}
	v, _ := atou(b)
	return int(v)
}

// readFile reads a small /proc file into w.buf, growing it as needed.
func (w *walker) readFile(path string) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	n := 0
	for {
		m, err := unix.Read(fd, w.buf[n:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil, false
		}
		if m == 0 {
			return w.buf[:n], true
		}
		n += m
		if n < len(w.buf) {
			// A /proc file is generated whole by the first read; a short
			// read is the end, and saves the read that would return 0.
			return w.buf[:n], true
		}
		w.buf = append(w.buf, make([]byte, len(w.buf))...)
	}
}

func (w *walker) readStat(proc string, pid int) (pstat, bool) {
	b, ok := w.readFile(proc + "/" + strconv.Itoa(pid) + "/stat")
	if !ok {
		return pstat{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
func parseStat(pid int, b []byte) (pstat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return pstat{}, false
	}
	// field n (1-based) is f[n-3] after the name.
	var f [22][]byte
	k := 0
	rest := b[i+1:]
	for k < len(f) {
		rest = bytes.TrimLeft(rest, " ")
		if len(rest) == 0 {
			break
		}
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		f[k] = bytes.TrimRight(rest[:j], "\n")
		rest = rest[j:]
		k++
	}
	if k < len(f) {
		return pstat{}, false
	}
	num := func(n int) uint64 {
		v, _ := atou(f[n-3])
		return v
	}
	signed := func(n int) int { return atoi(f[n-3]) }
	return pstat{
		pid:      pid,
		ppid:     signed(4),
		pgrp:     signed(5),
		flags:    num(9),
		ticks:    num(14) + num(15) + num(16) + num(17),
		ownTicks: num(14) + num(15),
		threads:  signed(20),
		start:    num(22),
		vsize:    num(23),
		rssPages: num(24),
	}, true
}

// countFDs counts the entries of /proc/<pid>/fd. Since Linux 6.2 the
// directory's size is that count, one stat call; before, it is 0 and the
// entries are counted without allocating a name per fd. An unreadable
// directory (another user's process when podvisor is not root) counts 0.
func (w *walker) countFDs(proc string, pid int) int {
	path := proc + "/" + strconv.Itoa(pid) + "/fd"
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	} else if st.Size > 0 {
		return int(st.Size)
	}
	return w.countEntries(path)
}

// countEntries counts a directory's entries other than . and ..
func (w *walker) countEntries(path string) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	count := 0
	for {
		n, err := unix.Getdents(fd, w.dents)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return count
		}
		if n <= 0 {
			return count
		}
		// linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		for off := 0; off+19 <= n; {
			reclen := int(w.dents[off+16]) | int(w.dents[off+17])<<8
			if reclen == 0 {
				break
			}
			if name := w.dents[off+19]; name != '.' {
				count++
			}
			off += reclen
		}
	}
}

// pipeInode returns the inode of the pipe at /proc/<pid>/fd/<fd>, or 0.
func pipeInode(proc string, pid, fd int) uint64 {
	target, err := os.Readlink(proc + "/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		return 0
	}
	s, ok := cutAround(target, "pipe:[", "]")
	if !ok {
		return 0
	}
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

func cutAround(s, prefix, suffix string) (string, bool) {
	if len(s) < len(prefix)+len(suffix) || s[:len(prefix)] != prefix || s[len(s)-len(suffix):] != suffix {
		return "", false
	}
	return s[len(prefix) : len(s)-len(suffix)], true
}

// rootPipes maps the stdout and stderr pipes of each root's leader to the root.
func (w *walker) rootPipes(proc string, roots []Root) map[uint64]int {
	m := map[uint64]int{}
	for i, r := range roots {
		if r.Pid <= 0 {
			continue
		}
		for _, fd := range []int{1, 2} {
			if ino := pipeInode(proc, r.Pid, fd); ino != 0 {
				m[ino] = i
			}
		}
	}
	return m
}

// pipeOwner returns the root whose output pipe pid holds as stdout or
// stderr, or -1.
func (w *walker) pipeOwner(proc string, pid int, pipes map[uint64]int) int {
	for _, fd := range []int{1, 2} {
		if i, ok := pipes[pipeInode(proc, pid, fd)]; ok {
			return i
		}
	}
	return -1
}
