package cgroup_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/cgroup"
	"github.com/podvisor/podvisor/internal/proc"
)

// TestV1SpawnersLandEachChildInItsOwnGroup: on this host's v1 hierarchies,
// children spawned through proc's spawner threads, some into groups of
// different controllers (memory; memory and pids; memory and cpu), some
// without a group, from several goroutines at once in a random order,
// each start in exactly its own group: never in the group of the child
// forked before it on the same thread (which a thread that stays there
// between forks would give if it kept a controller the next group is not
// in), and a child without a group in podvisor's own cgroups. Once the
// spawns are over the spawner threads are back home: no group lists a
// thread of this process, and every group can be removed.
func TestV1SpawnersLandEachChildInItsOwnGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup v1 directories need root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this host is cgroup v2: children are cloned into their groups, no thread moves")
	}
	h, err := cgroup.Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		t.Skip("no writable cgroup v1 hierarchy: ", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if len(h.Missing) > 0 {
		t.Skipf("limits not enforceable here: %v", h.Missing)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PODVISOR_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (PODVISOR_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	ctx, cancel := context.WithCancel(context.Background())
	r := proc.NewReaper(nil)
	go r.Run(ctx)
	t.Cleanup(cancel)

	spawnRound(t, r, h, rng)
	// Once more in a run directory made again under the same name (the
	// threads' descriptors of the first one are stale).
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h, err = cgroup.Open("/sys/fs/cgroup", "/proc/self/cgroup", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	spawnRound(t, r, h, rng)
}

// spawnRound is one round of TestV1SpawnersLandEachChildInItsOwnGroup:
// its children are killed and its groups removed at its end.
func spawnRound(t *testing.T, r *proc.Reaper, h *cgroup.Hierarchy, rng *rand.Rand) {
	kinds := []cgroup.Limits{
		{},                                   // no group
		{MemoryMax: 64 << 20},                // memory
		{MemoryMax: 64 << 20, PidsMax: 50},   // memory, pids
		{MemoryMax: 64 << 20, CPUWeight: 50}, // memory, cpu: never stayed in
	}
	type started struct {
		g     *cgroup.Group // nil: no group
		child *proc.Child
	}
	const n = 60
	plan := make([]int, n)
	for i := range plan {
		plan[i] = rng.IntN(len(kinds))
	}
	var (
		mu   sync.Mutex
		all  []started
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				var g *cgroup.Group
				s := proc.Spec{Argv: []string{"sleep", "1000"}}
				if lim := kinds[plan[i]]; lim != (cgroup.Limits{}) {
					var err error
					if g, err = h.New("spawn"+strconv.Itoa(i)+".1", lim); err != nil {
						t.Error(err)
						continue
					}
					s.Cgroup = g
				}
				c, err := proc.Spawn(r, s)
				if err != nil {
					t.Error(err)
					continue
				}
				mu.Lock()
				all = append(all, started{g, c})
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	defer func() {
		for _, s := range all {
			_ = s.child.Signal(9)
			<-s.child.Done()
			if s.g != nil {
				if err := s.g.Remove(); err != nil {
					t.Errorf("remove %v", err)
				}
			}
		}
	}()

	own := cgroupsOf(t, "/proc/self/cgroup")
	for _, s := range all {
		got := cgroupsOf(t, fmt.Sprintf("/proc/%d/cgroup", s.child.Pid()))
		for _, c := range []string{"memory", "pids", "cpu"} {
			want := own[c]
			if s.g != nil {
				if d := s.g.Dir(c); d != "" {
					want = strings.TrimPrefix(d, "/sys/fs/cgroup/"+c)
				}
			}
			if got[c] != want {
				t.Errorf("child %d (group %v): in %s cgroup %q, want %q", s.child.Pid(), s.g != nil, c, got[c], want)
			}
		}
	}

	// The threads go home once no spawn comes: no group lists a thread of
	// this process (the children are single-threaded: their pid only).
	deadline := time.Now().Add(10 * time.Second)
	for {
		var stray []string
		for _, s := range all {
			if s.g == nil {
				continue
			}
			for _, c := range []string{"memory", "pids", "cpu"} {
				d := s.g.Dir(c)
				if d == "" {
					continue
				}
				for _, tid := range tasksOf(t, filepath.Join(d, "tasks")) {
					if tid != s.child.Pid() {
						stray = append(stray, fmt.Sprintf("%s: %d", d, tid))
					}
				}
			}
		}
		if len(stray) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spawner threads still in children's groups: %v", stray)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cgroupsOf reads a /proc cgroup file: controller -> path.
func cgroupsOf(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

func tasksOf(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q", file, f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
