package app

import (
	"log/slog"
	"syscall"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// fdsPerProcess and fdSlack size the fd table reserved at start-up: a
// process's stdout and stderr pipes and its notify socket or pipe, and
// podvisor's own (HTTP and control connections, probes, epoll).
const (
	fdsPerProcess = 3
	fdSlack       = 64
)

// reserveFDs makes room for the children's pipes of c in one growth of the
// fd table, while the rest of the set-up goes on (see proc.ReserveFDs).
func reserveFDs(c *config.Config, log *slog.Logger) {
	need := fdsPerProcess*len(c.Names) + fdSlack
	if limit, ok := openFileLimit(); ok && uint64(fdsHeld(c)) > limit {
		// Said once, up front: otherwise the last launches fail one
		// by one with "too many open files".
		log.Warn("the open-file limit is lower than this config needs; the last processes may fail to start",
			"processes", len(c.Names), "needs", fdsHeld(c), "limit", limit,
			"fix", "raise the limit (ulimit -n, docker/podman --ulimit nofile=N:N, systemd LimitNOFILE=)")
	}
	if err := proc.ReserveFDs(need); err != nil {
		log.Debug("fd table left to grow as needed", "err", err)
	}
}

// fdsHeld is how many fds podvisor holds with every process of c running:
// a stdout and a stderr pipe end each, a notify socket for those that have
// one, and fdSlack of its own.
func fdsHeld(c *config.Config) int {
	n := fdSlack
	for _, p := range c.Processes {
		n += 2
		if p.Ready != nil && p.Ready.Kind == config.ProbeNotifySystemd || p.FDStoreMax > 0 {
			n++
		}
	}
	return n
}

// openFileLimit is RLIMIT_NOFILE's soft limit (Go raises it to the hard
// limit at start-up, so this is as high as podvisor can go).
func openFileLimit() (uint64, bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, false
	}
	return lim.Cur, true
}
