// Package oom tells whether the kernel's OOM killer ended a process. The
// kernel does not say so in the exit status (it is a plain SIGKILL), but it
// counts OOM kills per memory cgroup: cgroup v2 `oom_kill` in memory.events,
// cgroup v1 `oom_kill` in memory.oom_control (Linux 4.13+). Children share
// podvisor's cgroup, so a SIGKILL death that coincides with a rise of that
// counter was the OOM killer's.
package oom

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/podvisor/podvisor/internal/cgroup"
)

// Detector watches one memory cgroup's OOM kill counter. Its zero value and
// nil detect nothing.
type Detector struct {
	file string // memory.events (v2) or memory.oom_control (v1)

	mu      sync.Mutex
	claimed uint64 // counter value accounted for
}

// Open finds the memory cgroup of the calling process under root (normally
// "/sys/fs/cgroup") from procSelfCgroup (normally "/proc/self/cgroup") and
// returns a Detector for it, with the kills so far already accounted for.
// It returns an error, and a nil Detector, when no counter is readable.
func Open(root, procSelfCgroup string) (*Detector, error) {
	v2, v1, err := cgroup.OwnPaths(procSelfCgroup)
	if err != nil {
		return nil, err
	}
	var candidates []string
	if p, ok := v1["memory"]; ok { // v1 takes precedence: on a hybrid host v2 has no memory controller
		candidates = append(candidates,
			filepath.Join(root, "memory", p, "memory.oom_control"),
			filepath.Join(root, "memory", "memory.oom_control"))
	}
	if v2 != "" {
		// With a cgroup namespace the container's cgroup is the mount's root.
		candidates = append(candidates, filepath.Join(root, v2, "memory.events"), filepath.Join(root, "memory.events"))
	}
	for _, f := range candidates {
		n, err := readCount(f)
		if err == nil {
			return &Detector{file: f, claimed: n}, nil
		}
	}
	return nil, errors.New("no readable memory cgroup OOM counter (memory.events or memory.oom_control)")
}

// File is the counter file read, "" for a nil Detector.
func (d *Detector) File() string {
	if d == nil {
		return ""
	}
	return d.file
}

// Claim reports whether the cgroup counted an OOM kill that no earlier
// Claim has accounted for, and accounts for one. Call it for each death by
// SIGKILL that podvisor did not send.
func (d *Detector) Claim() bool {
	if d == nil || d.file == "" {
		return false
	}
	n, err := readCount(d.file)
	if err != nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if n > d.claimed {
		d.claimed++
		return true
	}
	return false
}

// readCount reads the "oom_kill N" line of a memory.events or
// memory.oom_control file.
func readCount(file string) (uint64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New(file + ": no oom_kill line (kernel older than 4.13?)")
}
