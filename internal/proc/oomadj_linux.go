package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const selfOOMScoreAdj = "/proc/self/oom_score_adj"

// withOOMScoreAdj runs start (a fork+exec) so that the child begins life
// with oom_score_adj adj. The kernel copies the value from parent to child
// at fork and keeps it across setuid and exec, and Go offers no hook between
// fork and exec, so podvisor sets its own value, forks, and puts its own
// back. Every other spawn waits meanwhile (adjMu), so no other child
// inherits the temporary value. nil adj just takes the shared side, unless
// exclusive is set (start changes something else of podvisor's own).
func (r *Reaper) withOOMScoreAdj(adj *int, exclusive bool, start func() error) error {
	if adj == nil && !exclusive {
		r.adjMu.RLock()
		defer r.adjMu.RUnlock()
		return start()
	}
	r.adjMu.Lock()
	defer r.adjMu.Unlock()
	if adj == nil {
		return start()
	}
	old, err := readOOMScoreAdj(selfOOMScoreAdj)
	if err != nil {
		return &SpawnError{Argv0: "", Reason: "cannot read podvisor's own oom_score_adj: " + errText(err), Err: err}
	}
	if old != *adj {
		if err := writeOOMScoreAdj(selfOOMScoreAdj, *adj); err != nil {
			return oomAdjError(*adj, old, err)
		}
		defer func() {
			if err := writeOOMScoreAdj(selfOOMScoreAdj, old); err != nil {
				r.log.Error("cannot restore podvisor's own oom_score_adj after a spawn", "want", old, "err", err)
			}
		}()
	}
	return start()
}

// oomAdjError explains a refused oom_score_adj.
func oomAdjError(adj, own int, err error) error {
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		return &SpawnError{Reason: fmt.Sprintf(
			"oom_score_adj %d: setting a value below podvisor's own minimum (here %d) needs CAP_SYS_RESOURCE, which podvisor (uid %d) lacks; run podvisor with CAP_SYS_RESOURCE or use a value of at least %d",
			adj, own, os.Geteuid(), own), Err: unix.EPERM}
	}
	return &SpawnError{Reason: fmt.Sprintf("oom_score_adj %d: %s", adj, errText(err)), Err: err}
}

func readOOMScoreAdj(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func writeOOMScoreAdj(path string, v int) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(strconv.Itoa(v))
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}
