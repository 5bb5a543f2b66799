// Package proc is the only place in podvisor that forks, execs, waits for or
// signals child processes (Linux only).
//
// # One reaper
//
// A Reaper owns every wait: its waiter goroutine blocks in waitid(WNOWAIT)
// and reaps the child it names with wait4(pid) (a full wait4(-1, WNOHANG)
// pass at start and as a fallback), so it reaps managed children and orphaned
// descendants alike (podvisor is PID 1 or a child subreaper). A second waiter would race it for exit statuses, which is why
// nothing outside this package may call exec.Cmd.Wait, Run, Output or
// CombinedOutput, and why at most one Reaper may Run in a process.
//
// Start registers a child in the reaper's table while holding the table lock
// across fork+exec, and the reap holds the same lock across wait4 and the lookup, so an
// exit is never delivered before its pid is known nor mistaken for an orphan's.
// Start works before Run: the child stays a zombie until Run's first pass reaps it.
//
// # Clean children
//
// Children start with an empty signal mask and default signal dispositions even
// when podvisor itself inherited blocked or ignored signals (docs/reliability.md, B19):
//
//   - Mask. Go's fork child restores the signal mask that the forking OS thread
//     had at fork time, and every Go thread carries the mask podvisor started
//     with (minus the few signals the runtime insists on receiving). The reaper
//     therefore forks from one dedicated goroutine locked to an OS thread whose
//     mask it empties first. That thread never exits, which also keeps
//     Pdeathsig meaningful: the kernel sends a child its death signal when the
//     creating thread dies, not the process (golang/go#27505).
//   - Dispositions. Go resets a signal to SIG_DFL in the fork child only if the
//     runtime has a handler installed for it. It does not install one for
//     SIGHUP/SIGINT (and a few others) that were ignored at startup, so
//     children would inherit SIG_IGN. Sanitize turns each such signal into a
//     handled-and-discarded one: podvisor still ignores it, children get the
//     default. SIGTTIN/SIGTTOU are deliberately left alone (see Sanitize).
//
// Children see exactly fds 0, 1, 2 and the optional notify fd: stdin is /dev/null
// (unless the caller passes a pipe or a terminal: Spec.Stdin, Spec.Terminal),
// Go opens everything else close-on-exec, and before its first spawn the
// reaper marks close-on-exec any fd podvisor itself inherited without the flag.
//
// # Signalling groups safely
//
// Every spawned child leads its own process group. Child.Signal signals the group
// while holding the reaper lock if the leader is not yet reaped (so its pid, which
// is the pgid, cannot have been reused); after the leader is reaped it signals only
// if the group still has members (kill(-pgid, 0)). The residual race: the last
// member exits and the kernel hands the same number to a new process that makes
// itself a group leader, all between that check and the kill. That needs a full
// pid wrap-around in microseconds.
package proc
