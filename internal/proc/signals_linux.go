package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sanitize fixes the signal state that children would otherwise inherit from
// podvisor, and makes a broken stdout survivable. Call it once, early in
// main, before spawning anything. It returns the signals podvisor inherited as
// ignored and that children will now get with their default action.
//
// Dispositions: Go resets a signal to SIG_DFL in a fork child only when the
// runtime handles it, and the runtime leaves SIGHUP and SIGINT (and a few
// others) ignored if they were ignored at startup (nohup, a shell's background
// job, an odd parent). Sanitize subscribes each inherited-ignored signal to a
// channel nobody reads: the signal is then handled (and dropped, as before)
// in podvisor, and reset to default in children. The signal mask needs no such
// step: the reaper forks from a thread with an empty mask.
//
// SIGTTIN and SIGTTOU are left as inherited: if podvisor, in a background
// process group of a terminal with tostop, wrote to that terminal with a
// handler installed, the kernel would restart the write and signal again
// forever. Children cannot reach the terminal anyway (stdin is /dev/null and
// stdout/stderr are podvisor's pipes), so an inherited SIG_IGN for these two
// is harmless to them.
//
// SIGPIPE (docs/reliability.md, D10): a Go program that writes to a broken pipe on fd 1
// or 2 dies of SIGPIPE unless SIGPIPE is subscribed; after Sanitize such a
// write fails with EPIPE instead, so `podvisor run | head -1` cannot kill
// podvisor. Children still get SIGPIPE's default action.
//
// Later code must not call signal.Ignore or signal.Reset for these signals:
// Ignore makes children inherit SIG_IGN again, and Reset restores the
// inherited SIG_IGN. To ignore a signal in podvisor, subscribe and drop it.
func Sanitize() ([]syscall.Signal, error) {
	ignored, err := ignoredSignals()
	if err != nil {
		return nil, err
	}
	var reset []syscall.Signal
	for _, s := range ignored {
		switch s {
		case syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGKILL, syscall.SIGSTOP:
			continue
		}
		reset = append(reset, s)
	}
	// A 1-buffered channel that is never read: os/signal never blocks on a
	// full channel, so every delivery after the first is simply dropped.
	discard := make(chan os.Signal, 1)
	subscribe := []os.Signal{syscall.SIGPIPE}
	for _, s := range reset {
		subscribe = append(subscribe, s)
	}
	signal.Notify(discard, subscribe...)

	// The runtime installs no handler for a few signals it leaves to a C
	// library (32 and 33, glibc's internal SIGCANCEL and SIGSETXID), so
	// Notify cannot take them over. GNU make, for one, runs its recipes
	// with them ignored. Restore their default directly: podvisor does not
	// use them, and default is what they are in a normally started process.
	after := ignored // nothing was ignored that Notify could have changed
	if len(reset) > 0 {
		if after, err = ignoredSignals(); err != nil {
			return reset, err
		}
	}
	var left []syscall.Signal
	for _, s := range after {
		if s == syscall.SIGTTIN || s == syscall.SIGTTOU {
			continue
		}
		// Still ignored means the runtime holds no handler for it.
		if setDefault(s) == nil {
			if !slices.Contains(reset, s) {
				reset = append(reset, s)
			}
			continue
		}
		left = append(left, s)
	}
	reset = slices.DeleteFunc(reset, func(s syscall.Signal) bool { return slices.Contains(left, s) })
	if len(left) > 0 {
		return reset, fmt.Errorf("signals %v stay ignored for children", left)
	}
	return reset, nil
}

// setDefault sets sig's disposition to SIG_DFL with a raw rt_sigaction. The
// all-zero struct means SIG_DFL, no flags and an empty mask whatever the
// architecture's layout of struct sigaction, so a zeroed buffer larger than
// any of them is passed.
func setDefault(sig syscall.Signal) error {
	var act [8]uint64
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// ignoredSignals reads SigIgn from /proc/self/status.
func ignoredSignals() ([]syscall.Signal, error) {
	mask, err := statusMask(os.Getpid(), "SigIgn")
	if err != nil {
		return nil, err
	}
	var out []syscall.Signal
	for i := range 64 {
		if mask&(1<<i) != 0 {
			out = append(out, syscall.Signal(i+1))
		}
	}
	return out, nil
}

// statusMask returns a hexadecimal signal mask field (SigBlk, SigIgn, SigCgt,
// ShdPnd...) of /proc/<pid>/status.
func statusMask(pid int, field string) (uint64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	prefix := []byte(field + ":")
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), prefix); ok {
			m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s of pid %d: %w", field, pid, err)
			}
			return m, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
