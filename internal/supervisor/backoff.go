package supervisor

import "time"

// nextBackoff returns the delay before the next restart. prev is the delay used
// for the previous restart (0 for none yet); ran is how long the exited
// incarnation ran. A run of at least resetAfter counts as healthy and resets the
// sequence, as systemd and Kubernetes do, so one crash after days of uptime
// restarts quickly.
func nextBackoff(prev, base, max, ran, resetAfter time.Duration) time.Duration {
	if prev == 0 || ran >= resetAfter {
		return min(base, max)
	}
	next := prev * 2
	if next > max || next < prev { // cap, and guard overflow
		return max
	}
	return next
}
