package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// MinWatchdog is the shortest `watchdog:` accepted: below it the loop's own
// scheduling slack (a few ms on a loaded machine) would be a real share of
// the deadline, and a child pinging that often costs more than it shows.
const MinWatchdog = 100 * time.Millisecond

// watchdog decodes `watchdog: DURATION`. The child pings with WATCHDOG=1 on
// its NOTIFY_SOCKET, so the process must use `ready: {notify: systemd}`,
// which is what gives it one.
func (l *loader) watchdog(n *yaml.Node, path *keyPath, p *Process) time.Duration {
	d, ok := l.duration(n, path, true)
	if !ok {
		return 0
	}
	if d < MinWatchdog {
		l.errorf(n, path, "watchdog %s is shorter than %s", formatDuration(d), formatDuration(MinWatchdog)).Hint =
			"systemd's own advice is to ping at half the interval; use at least 100ms"
		return 0
	}
	if p.Ready == nil || p.Ready.Kind != ProbeNotifySystemd {
		l.errorf(n, path, "watchdog needs ready: {notify: systemd}").Hint =
			"the child sends WATCHDOG=1 to the NOTIFY_SOCKET that notify: systemd gives it"
		return 0
	}
	return d
}
