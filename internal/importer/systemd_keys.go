package importer

import (
	"strings"
	"syscall"

	"github.com/podvisor/podvisor/internal/config"
	"golang.org/x/sys/unix"
)

// sdSignal returns the signal a systemd exit-status list names (SIGTERM
// or TERM, any signal the kernel has), or 0.
func sdSignal(w string) syscall.Signal {
	name := strings.ToUpper(strings.TrimSpace(w))
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	return unix.SignalNum(name)
}

// The reasons the import gives for the systemd keys it drops: each says
// what the key did under systemd and why procs.yaml has nothing for it
// (docs/import.md's systemd table).

// sdServiceDropped: [Service] keys without a counterpart, with why.
var sdServiceDropped = map[string]string{
	"ExecStopPost":              "systemd runs it after the process has stopped; podvisor runs nothing after a stop (stop.command runs before the stop signal)",
	"ExecCondition":             "systemd skips the start when it fails; podvisor starts every process it lists: put the check in the command (sh -c 'CHECK && exec CMD')",
	"RuntimeMaxSec":             "systemd stops the unit after that long; podvisor has no run-time limit for a process",
	"RuntimeRandomizedExtraSec": "goes with RuntimeMaxSec=, which podvisor has no counterpart for",
	"SendSIGKILL":               "podvisor always sends SIGKILL when stop.timeout runs out",
	"SendSIGHUP":                "podvisor sends only stop.signal (then SIGKILL)",
	"FinalKillSignal":           "podvisor's last signal is always SIGKILL",
	"TimeoutAbortSec":           "systemd's timeout after a watchdog abort (SIGABRT); podvisor stops a process whose watchdog expired with stop.signal and stop.timeout",
	"WatchdogSignal":            "podvisor stops a process whose watchdog expired with stop.signal (a liveness failure), not a signal of its own",
	"GuessMainPID":              "podvisor never guesses a main pid: it takes PIDFile= (daemon.pid_file) or MAINPID=",
	"NotifyAccess":              "podvisor takes notify messages from the process and its descendants (or a MAINPID= daemon), as NotifyAccess=all does for the unit's own processes",
	"PassEnvironment":           "podvisor passes its whole environment to every process, so these variables reach it (and the others too)",
	"UnsetEnvironment":          "podvisor cannot take a variable out of one process's environment: it passes its own environment, then env_file and env",
	"SupplementaryGroups":       "podvisor gives the user: its groups from the group database; no extra groups",
	"StandardInput":             "podvisor gives a process /dev/null as stdin (or a terminal or pipe with tty: or stdin:)",
	"TTYPath":                   "podvisor gives a process a terminal of its own with tty: true, not a named one",
	"PAMName":                   "podvisor opens no PAM session",
	"OOMPolicy":                 "systemd stops the whole unit when one of its processes is killed for lack of memory; podvisor counts the kill (OOMKilled) and the process's exit follows its restart policy",
	"ExitType":                  "podvisor's process ends when its main process exits (ExitType=main), then it stops the rest of its group",
	"TimeoutStartFailureMode":   "podvisor stops a process whose start timed out with stop.signal then SIGKILL (terminate)",
	"TimeoutStopFailureMode":    "podvisor sends SIGKILL when stop.timeout runs out (kill)",
	"RestartMode":               "podvisor restarts the process alone, not a chain of units",
	"SyslogFacility":            "podvisor names each line with the process name; no syslog",
	"SyslogLevel":               "podvisor names each line with the process name; no syslog",
	"SyslogLevelPrefix":         "podvisor names each line with the process name; no syslog",
	"LogLevelMax":               "podvisor keeps every line the process writes",
	"LogExtraFields":            "podvisor's log lines carry the process name only",
	"BusName":                   "podvisor has no D-Bus: Type=dbus is read as simple",
	"Sockets":                   "podvisor gives the process the sockets of the .socket unit of its name (or whose Service= names it); import that unit",
	"USBFunctionDescriptors":    "podvisor does not set up USB functions",
	"USBFunctionStrings":        "podvisor does not set up USB functions",
	"Personality":               "podvisor runs the program with the kernel's own personality",
	"CoredumpFilter":            "podvisor leaves /proc/PID/coredump_filter as the kernel sets it",
	"TimerSlackNSec":            "podvisor leaves the timer slack as the kernel sets it",
}

// sdUnitDropped says why a [Unit] key is dropped.
func sdUnitDropped(name string) string {
	switch {
	case strings.HasPrefix(name, "Condition"):
		return "systemd skips the unit when the condition fails at start; podvisor starts every process it lists: check it in the command (sh -c 'test ... && exec CMD')"
	case strings.HasPrefix(name, "Assert"):
		return "systemd fails the start when the assertion fails; podvisor starts every process it lists: check it in the command (sh -c 'test ... || exit 1; exec CMD')"
	case name == "StartLimitIntervalSec" || name == "StartLimitBurst" || name == "StartLimitInterval" || name == "StartLimitAction":
		return "systemd stops restarting after that many starts within the interval; podvisor's restart.limit counts every restart of the process's life, with no window, so it is not set (the backoff grows to max_backoff instead)"
	case name == "OnFailure" || name == "OnSuccess" || name == "OnFailureJobMode" || name == "OnSuccessJobMode":
		return "systemd starts other units when this one fails or succeeds; podvisor starts nothing on an exit (restart.rules with action restart-all or shutdown are the nearest)"
	case name == "Conflicts":
		return "systemd stops one of two conflicting units; podvisor runs every process it lists at once"
	case name == "DefaultDependencies" || name == "RequiresMountsFor" || name == "WantsMountsFor":
		return "systemd's own ordering against mounts, sysinit and shutdown; a container has none of them"
	case name == "Requisite":
		return "fails the unit unless the other one already runs; not among the imported units' order (use After= and Requires= between imported units)"
	case name == "FailureAction" || name == "SuccessAction" || name == "FailureActionExitStatus" || name == "SuccessActionExitStatus":
		return "what systemd does to the whole system when the unit ends; under podvisor a failure that is not restarted ends the run anyway, and type: job ends it once every job completed"
	case name == "JobTimeoutSec" || name == "JobRunningTimeoutSec" || name == "JobTimeoutAction" || name == "JobTimeoutRebootArgument":
		return "a timeout of systemd's job queue; podvisor has start_timeout and stop.timeout per process"
	case name == "StopWhenUnneeded" || name == "RefuseManualStart" || name == "RefuseManualStop" || name == "AllowIsolate" || name == "IgnoreOnIsolate" || name == "CollectMode" || name == "Upholds" || name == "PropagatesReloadTo" || name == "ReloadPropagatedFrom" || name == "PropagatesStopTo" || name == "StopPropagatedFrom" || name == "JoinsNamespaceOf" || name == "SourcePath" || name == "Transient":
		return "governs how systemd's job engine treats the unit (isolation, manual starts, propagation); podvisor has no job engine: every process it lists runs until the teardown"
	}
	return "not a [Unit] setting the import knows: look it up in systemd.unit(5)"
}

// serviceReload converts ExecReload= to reload:. The common
// "kill -HUP $MAINPID" (any signal) becomes reload: {signal: ...}, which
// podvisor sends to the main process as systemd's kill reaches $MAINPID;
// any other command is run by podvisor reload NAME.
func (c *sdConv) serviceReload(f *unitFile, p *Process, k iniKey, spec func(iniKey, string) string) {
	pos, what := kpos(f, k), f.name+": "+k.Name
	if strings.TrimSpace(k.Value) == "" {
		p.Reload = nil
		return
	}
	if sig := killMainPID(k.Value); sig != 0 {
		p.Reload = &config.Reload{Signal: sig}
		c.r.AsIs(pos, what+" (reload: {signal: "+unix.SignalName(sig)+"}, sent to the main process as systemd's kill reaches $MAINPID)")
		return
	}
	rl := &config.Reload{}
	if !c.setCommand(f, p, k, spec, "reload", &rl.Command, &rl.Shell) {
		return
	}
	p.Reload = rl
	if strings.Contains(k.Value, "MAINPID") {
		note(p, c.r, pos, "reload", "ExecReload= reads $MAINPID, which systemd sets and podvisor does not: use reload: {signal: ...} when the command only signals the main process")
		return
	}
	c.r.AsIs(pos, what+" (reload: {command: ...}, run by podvisor reload NAME)")
}

// killMainPID recognizes "[/usr]/bin/kill -SIG $MAINPID" (also "-s SIG",
// "--signal SIG", ${MAINPID}) and returns the signal, or 0.
func killMainPID(v string) syscall.Signal {
	w := strings.Fields(strings.TrimLeft(strings.TrimSpace(v), "-@+!:"))
	if len(w) < 3 || (w[0] != "kill" && w[0] != "/bin/kill" && w[0] != "/usr/bin/kill") {
		return 0
	}
	if last := w[len(w)-1]; last != "$MAINPID" && last != "${MAINPID}" {
		return 0
	}
	var sig string
	switch {
	case len(w) == 3 && strings.HasPrefix(w[1], "-"):
		sig = strings.TrimPrefix(w[1], "-")
	case len(w) == 4 && (w[1] == "-s" || w[1] == "--signal"):
		sig = w[2]
	default:
		return 0
	}
	name := signalName(sig)
	if name == "" || name == "SIGKILL" || name == "SIGSTOP" || name == "SIGCONT" {
		return 0
	}
	return syscall.Signal(signalNumbers[name])
}
