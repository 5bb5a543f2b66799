package control

import (
	"syscall"

	"github.com/podvisor/podvisor/internal/proc"
)

// ParseSignal reads a signal as `podvisor signal` takes it (proc.ParseSignal).
func ParseSignal(s string) (syscall.Signal, error) { return proc.ParseSignal(s) }

// SignalName names a signal the way `podvisor signal` reports it
// (proc.SignalName).
func SignalName(sig syscall.Signal) string { return proc.SignalName(sig) }
