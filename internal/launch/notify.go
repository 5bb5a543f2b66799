package launch

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
	"github.com/podvisor/podvisor/internal/supervisor"
	"golang.org/x/sys/unix"
)

// notifyPool hands out the NOTIFY_SOCKETs of incarnations. Creating one (a
// bind that makes a file, a chmod) costs 0.2-0.6 ms, which sat between a
// dependency's readiness and its dependent's exec. So one spare is made in
// the background after each use, and the next launch takes it. A spare is
// never shared: every incarnation still gets a socket no one else had.
type notifyPool struct {
	mu    sync.Mutex
	spare *health.NotifySocket // made ahead of need
}

// socket returns a fresh NOTIFY_SOCKET in the directory runtimeDir returns.
func (np *notifyPool) socket(runtimeDir func() (string, error)) (*health.NotifySocket, error) {
	np.mu.Lock()
	s := np.spare
	np.spare = nil
	np.mu.Unlock()
	dir, err := runtimeDir()
	if err != nil {
		return nil, err
	}
	if s == nil {
		if s, err = health.NewNotifySocket(dir); err != nil {
			return nil, err
		}
	}
	go func() {
		next, err := health.NewNotifySocket(dir)
		if err != nil {
			return // the next launch makes its own and reports the error
		}
		np.mu.Lock()
		if np.spare == nil {
			np.spare, next = next, nil
		}
		np.mu.Unlock()
		if next != nil {
			next.Close()
		}
	}()
	return s, nil
}

// readNotify passes what the process mp of p says on its notify socket to
// the supervisor's hooks (READY=1 only when readiness is notify-systemd),
// and stores the fds it hands over. It returns when the socket closes.
func (l *Launcher) readNotify(p *config.Process, sock *health.NotifySocket, mp *mainProc, readyKind config.ProbeKind, h supervisor.Hooks, warn *warnLimiter) {
	_ = sock.Run(mp.leader.Pid(), func(n health.Notification) {
		if n.MainPID > 0 {
			// First, as systemd does: the rest of the message may be
			// about the new main process.
			if err := mp.adopt(n.MainPID, false); err != nil {
				warn.Warn("MAINPID refused", "process", p.Name, "mainpid", n.MainPID, "reason", err.Error())
			} else if h.MainPID != nil {
				h.MainPID(n.MainPID)
			}
		}
		if n.Status != "" {
			h.Status(n.Status)
		}
		if n.Ready && readyKind == config.ProbeNotifySystemd {
			h.Ready("READY=1")
		}
		if (n.Watchdog || n.WatchdogTrigger) && h.Watchdog != nil {
			h.Watchdog(n.WatchdogTrigger)
		}
		if n.ExtendUsec > 0 && h.Extend != nil {
			h.Extend(time.Duration(min(n.ExtendUsec, uint64(24*time.Hour/time.Microsecond))) * time.Microsecond)
		}
		if n.Errno > 0 && h.Errno != nil {
			h.Errno(n.Errno)
		}
		if n.Stopping && h.Stopping != nil {
			h.Stopping()
		}
		if n.Reloading && h.Reloading != nil {
			h.Reloading(monotonicTime(n.MonotonicUsec))
		}
		if n.Store != nil {
			l.FDStore.handleOrClose(p, n.Store, warn.Warn)
		}
	}, func(reason string) {
		warn.Warn("notify message rejected", "process", p.Name, "reason", reason)
	})
}

// waitNotifyFD waits for the newline on p's notify fd (read end r).
func (l *Launcher) waitNotifyFD(p *config.Process, r *os.File, h supervisor.Hooks) {
	switch err := health.WaitNotifyFD(r); {
	case err == nil:
		h.Ready(fmt.Sprintf("newline on fd %d", p.Ready.FD))
	case errors.Is(err, health.ErrNotifyClosed):
		// s6 rule: EOF without a newline is not readiness; say so,
		// or the wait would look like a hang (docs/reliability.md, C10).
		l.logger().Warn("notify fd closed without readiness", "process", p.Name, "fd", p.Ready.FD)
		h.Status(fmt.Sprintf("notify fd %d closed without readiness", p.Ready.FD))
	}
}

// monotonicTime is the time.Time of a CLOCK_MONOTONIC reading in µs
// (MONOTONIC_USEC=), zero for 0 or a reading podvisor cannot take.
func monotonicTime(usec uint64) time.Time {
	if usec == 0 {
		return time.Time{}
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return time.Time{}
	}
	now := uint64(ts.Nano() / 1000)
	if usec > now {
		usec = now // from the future: as of now
	}
	return time.Now().Add(-time.Duration(now-usec) * time.Microsecond)
}
