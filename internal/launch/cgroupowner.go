package launch

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podvisor/podvisor/internal/cgroup"
)

// groupOwner makes the processes' cgroups ahead of their starts and
// removes them after their exits, so that a start only enters its group
// (v1: its spawner thread moves in and out; v2: the directory is named in
// the clone) and an exit only reads its counters. One goroutine owns the
// groups in between: the ones made ahead, and the ones being removed.
//
// A group made ahead is for one incarnation of one process (its name is
// NAME.GEN): the first of each process when the config is loaded (Plan),
// the next one when an incarnation exits. A start whose group is not
// there yet (or was made with other limits) has it made at once, as
// before; nothing is made twice.
//
// perf: a start takes a group made ahead from shelf without a word to the
// goroutine, which may be in the middle of making another group (a
// fraction of a millisecond, several on a loaded machine): only a start
// whose group is not on the shelf waits for it.
type groupOwner struct {
	h     *cgroup.Hierarchy
	shelf shelf
	take  chan takeReq
	bg    chan ownerJob // ahead and remove requests, queued by the goroutine
	// ending: the run's teardown began (dropAhead): no more groups made ahead.
	ending atomic.Bool
	close  chan chan []*cgroup.Group
	done   chan struct{} // closed when the goroutine has returned
}

// takeReq asks for the group of incarnation gen of name.
type takeReq struct {
	name  string
	gen   uint64
	lim   cgroup.Limits
	reply chan takeRes
}

type takeRes struct {
	g   *cgroup.Group
	err error
}

// ownerJob is a request that needs no answer: make a group ahead (g nil),
// remove g, or (drop) remove every group made ahead.
type ownerJob struct {
	name string
	gen  uint64
	lim  cgroup.Limits
	g    *cgroup.Group
	drop bool
}

// made is a group made ahead, with the limits it was made with.
type made struct {
	g   *cgroup.Group
	lim cgroup.Limits
}

// shelf holds the groups made ahead, and by process the last incarnation
// a start asked for (a group for it or an earlier one is not made ahead).
// The goroutine puts groups on it; starts, and the goroutine, take them.
type shelf struct {
	mu   sync.Mutex
	made map[string]made   // by group name
	last map[string]uint64 // by process
}

// take records that incarnation gen of name starts and returns its group
// made ahead if there is one with lim; a group made with other limits is
// returned as stale, to be removed.
func (sh *shelf) take(name string, gen uint64, lim cgroup.Limits) (g, stale *cgroup.Group) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.last[name] = gen
	key := groupName(name, gen)
	m, ok := sh.made[key]
	if !ok {
		return nil, nil
	}
	delete(sh.made, key)
	if m.lim != lim {
		return nil, m.g // made for other limits (a reload changed them)
	}
	return m.g, nil
}

// wanted reports whether incarnation gen of name still needs a group
// made ahead: none is on the shelf and no start asked for it or a later one.
func (sh *shelf) wanted(name string, gen uint64) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.made[groupName(name, gen)]; ok {
		return false
	}
	last, ok := sh.last[name]
	return !ok || gen > last
}

// put shelves g for incarnation gen of name, unless a later incarnation
// started while it was made (then g is returned, to be removed). A start
// of gen itself that came meanwhile waits for the goroutine, which serves
// it from the shelf next.
func (sh *shelf) put(name string, gen uint64, m made) (extra *cgroup.Group) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if last, ok := sh.last[name]; ok && gen < last {
		return m.g
	}
	sh.made[groupName(name, gen)] = m
	return nil
}

// empty takes every group off the shelf.
func (sh *shelf) empty() []*cgroup.Group {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var out []*cgroup.Group
	for k, m := range sh.made {
		out = append(out, m.g)
		delete(sh.made, k)
	}
	return out
}

// removal is a group to remove, and when to try again.
type removal struct {
	g     *cgroup.Group
	tries int
	at    time.Time
}

// Removal retries: a v1 cgroup whose last task was just reaped can still
// refuse rmdir (EBUSY) for a moment; a group that still holds a process
// (a daemon that outlived its process) is kept for Close.
const (
	removeTries = 8
	removeRetry = 2 * time.Millisecond // doubled at each try: about 0.5 s in all
)

// bgQueue is how many ahead and remove requests may wait to be read; a
// sender never blocks on it for ahead (the start makes its own group).
const bgQueue = 4096

func newGroupOwner(h *cgroup.Hierarchy) *groupOwner {
	o := &groupOwner{h: h, take: make(chan takeReq), bg: make(chan ownerJob, bgQueue),
		close: make(chan chan []*cgroup.Group), done: make(chan struct{})}
	o.shelf.made, o.shelf.last = map[string]made{}, map[string]uint64{}
	go o.run()
	return o
}

// get returns the group of incarnation gen of name, made ahead or now.
func (o *groupOwner) get(name string, gen uint64, lim cgroup.Limits) (*cgroup.Group, error) {
	g, stale := o.shelf.take(name, gen, lim)
	if stale != nil {
		_ = stale.Remove() // now: its name is made again below
	}
	if g != nil {
		return g, nil
	}
	r := takeReq{name: name, gen: gen, lim: lim, reply: make(chan takeRes, 1)}
	select {
	case o.take <- r:
		res := <-r.reply
		return res.g, res.err
	case <-o.done: // closed: the run is over
		return o.h.New(groupName(name, gen), lim)
	}
}

// ahead asks for incarnation gen of name's group to be made ahead; dropped
// when the queue is full.
func (o *groupOwner) ahead(name string, gen uint64, lim cgroup.Limits) {
	if o.ending.Load() {
		return
	}
	select {
	case o.bg <- ownerJob{name: name, gen: gen, lim: lim}:
	default:
	}
}

// dropAhead stops the making of groups ahead and has the ones on the
// shelf removed; it never blocks (a full queue leaves them to stop).
func (o *groupOwner) dropAhead() {
	o.ending.Store(true)
	select {
	case o.bg <- ownerJob{drop: true}:
	default:
	}
}

// remove removes g off the caller's path.
func (o *groupOwner) remove(g *cgroup.Group) {
	select {
	case o.bg <- ownerJob{g: g}:
	case <-o.done:
		_ = g.Remove()
	}
}

// stop removes every group made ahead and every group it can, and returns
// those it cannot (they still hold processes).
func (o *groupOwner) stop() []*cgroup.Group {
	reply := make(chan []*cgroup.Group)
	select {
	case o.close <- reply:
		return <-reply
	case <-o.done:
		return nil
	}
}

func groupName(name string, gen uint64) string { return name + "." + strconv.FormatUint(gen, 10) }

// ownerState is what the owner's goroutine holds (besides the shelf).
type ownerState struct {
	pending  []ownerJob      // ahead and remove requests not done yet
	removing []removal       // removals waiting to be tried again
	left     []*cgroup.Group // groups that still hold processes
}

func (o *groupOwner) run() {
	defer close(o.done)
	s := &ownerState{}
	var retry *time.Timer
	for {
		// A start's request goes before any work of the owner's own.
		select {
		case r := <-o.take:
			r.reply <- o.serve(s, r)
			continue
		default:
		}
		select {
		case r := <-o.take:
			r.reply <- o.serve(s, r)
			continue
		case j := <-o.bg:
			s.pending = append(s.pending, j)
			continue
		case reply := <-o.close:
			reply <- o.finish(s)
			return
		default:
		}
		if len(s.pending) > 0 {
			j := s.pending[0]
			s.pending = s.pending[1:]
			o.do(s, j)
			continue
		}
		if o.retryDue(s) {
			continue
		}
		var wake <-chan time.Time
		if len(s.removing) > 0 {
			if retry == nil {
				retry = time.NewTimer(time.Until(s.removing[0].at))
			} else {
				retry.Reset(time.Until(s.removing[0].at))
			}
			wake = retry.C
		}
		select {
		case r := <-o.take:
			r.reply <- o.serve(s, r)
		case j := <-o.bg:
			s.pending = append(s.pending, j)
		case reply := <-o.close:
			reply <- o.finish(s)
			return
		case <-wake:
		}
	}
}

// serve hands out the group of a start that was not on the shelf when
// it asked (it may be now: the goroutine was making it).
func (o *groupOwner) serve(s *ownerState, r takeReq) takeRes {
	g, stale := o.shelf.take(r.name, r.gen, r.lim)
	if stale != nil {
		_ = stale.Remove() // now: its name is made again below
	}
	if g != nil {
		return takeRes{g: g}
	}
	g, err := o.h.New(groupName(r.name, r.gen), r.lim)
	return takeRes{g: g, err: err}
}

// do makes a group ahead or removes one.
func (o *groupOwner) do(s *ownerState, j ownerJob) {
	switch {
	case j.g != nil:
		o.tryRemove(s, removal{g: j.g})
		return
	case j.drop:
		for _, g := range o.shelf.empty() {
			o.tryRemove(s, removal{g: g})
		}
		return
	case o.ending.Load():
		return // queued before the teardown began
	}
	if !o.shelf.wanted(j.name, j.gen) {
		return // made already, or its start came first and made it
	}
	g, err := o.h.New(groupName(j.name, j.gen), j.lim)
	if err != nil {
		return
	}
	if extra := o.shelf.put(j.name, j.gen, made{g: g, lim: j.lim}); extra != nil {
		o.tryRemove(s, removal{g: extra}) // a later incarnation started meanwhile
	}
}

// tryRemove removes r's group, or queues it to be tried again.
func (o *groupOwner) tryRemove(s *ownerState, r removal) {
	if r.g.Remove() == nil {
		return
	}
	if !r.g.Empty() {
		s.left = append(s.left, r.g)
		return
	}
	r.tries++
	if r.tries >= removeTries {
		s.left = append(s.left, r.g)
		return
	}
	r.at = time.Now().Add(removeRetry << r.tries)
	i := len(s.removing)
	for i > 0 && s.removing[i-1].at.After(r.at) {
		i--
	}
	s.removing = append(s.removing, removal{})
	copy(s.removing[i+1:], s.removing[i:])
	s.removing[i] = r
}

// retryDue tries the first removal again if its time has come.
func (o *groupOwner) retryDue(s *ownerState) bool {
	if len(s.removing) == 0 || time.Now().Before(s.removing[0].at) {
		return false
	}
	r := s.removing[0]
	s.removing = s.removing[1:]
	o.tryRemove(s, r)
	return true
}

// finish removes what the owner holds and returns what it cannot remove.
func (o *groupOwner) finish(s *ownerState) []*cgroup.Group {
	for {
		select {
		case j := <-o.bg:
			s.pending = append(s.pending, j)
			continue
		default:
		}
		break
	}
	for _, g := range o.shelf.empty() {
		_ = g.Remove()
	}
	left := s.left
	for _, j := range s.pending {
		if j.g != nil && j.g.Remove() != nil {
			left = append(left, j.g)
		}
	}
	for _, r := range s.removing {
		if r.g.Remove() != nil {
			left = append(left, r.g)
		}
	}
	return left
}
