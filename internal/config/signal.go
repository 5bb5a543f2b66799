package config

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// stopSignals are the signals a process may ask to be stopped with, in the
// order error messages list them. SIGKILL and SIGSTOP are refused (see
// parseStopSignal); numbers are refused because they differ between
// architectures and are easy to get wrong.
var stopSignals = []struct {
	name string
	sig  syscall.Signal
}{
	{"SIGTERM", syscall.SIGTERM},
	{"SIGINT", syscall.SIGINT},
	{"SIGQUIT", syscall.SIGQUIT},
	{"SIGHUP", syscall.SIGHUP},
	{"SIGUSR1", syscall.SIGUSR1},
	{"SIGUSR2", syscall.SIGUSR2},
	{"SIGWINCH", syscall.SIGWINCH}, // Apache httpd's graceful stop
	{"SIGABRT", syscall.SIGABRT},
	{"SIGALRM", syscall.SIGALRM},
}

func stopSignalNames() []string {
	names := make([]string, len(stopSignals))
	for i, s := range stopSignals {
		names[i] = s.name
	}
	return names
}

// parseStopSignal accepts a signal name with or without the SIG prefix, in
// any case: SIGTERM, TERM, sigterm. It returns a message and a hint on error.
func parseStopSignal(s string) (sig syscall.Signal, msg, hint string) {
	valid := "valid: " + strings.Join(stopSignalNames(), ", ")
	if _, err := strconv.Atoi(s); err == nil {
		return 0, fmt.Sprintf("signal numbers are not accepted: %s", s), "use a name; " + valid
	}
	name := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	for _, ss := range stopSignals {
		if ss.name == name {
			return ss.sig, "", ""
		}
	}
	switch name {
	case "SIGKILL":
		return 0, "SIGKILL cannot be a stop signal: podvisor sends it anyway when stop.timeout runs out",
			"use SIGTERM with a short stop.timeout, or stop.timeout: 0s to kill at once"
	case "SIGSTOP":
		return 0, "SIGSTOP cannot be a stop signal: it pauses the process instead of stopping it", valid
	}
	if h := didYouMean(name, stopSignalNames()); h != "" {
		hint = h + " " + valid
	} else {
		hint = valid
	}
	return 0, fmt.Sprintf("unknown signal %q", s), hint
}
