package testharness

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Slowdown is the factor PODVISOR_TEST_SLOWDOWN stretches every deadline by:
// 1 when unset, an error when it is not a number >= 1.
func Slowdown() (float64, error) {
	s := os.Getenv("PODVISOR_TEST_SLOWDOWN")
	if s == "" {
		return 1, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 1 {
		return 1, fmt.Errorf("PODVISOR_TEST_SLOWDOWN=%q: want a number >= 1", s)
	}
	return f, nil
}

// Scale stretches d by factor.
func Scale(d time.Duration, factor float64) time.Duration {
	return time.Duration(float64(d) * factor)
}

// Poll calls cond every interval until it returns true or timeout has passed
// since the call, and reports whether it returned true. cond is always
// called at least once, and once more after the last sleep.
func Poll(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval) // the poll period, not a synchronisation
	}
	return true
}
