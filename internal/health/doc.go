// Package health answers "is it ready?" and "is it alive?" for a supervised
// process. It has two kinds of sources.
//
// Polled checks (http, tcp, exec, file) implement Checker: one attempt per
// Check call, bounded by the ctx it gets; a failure is a Result with OK false
// and a Detail for logs, never a Go error. Watch runs a Checker on a schedule
// and applies the thresholds:
//
//	        InitialDelay
//	start ----------------> attempt --every StartInterval--> ... until
//	                        SuccessThreshold successes in a row: emit Ready=true
//	                        then every Interval:
//	                          FailureThreshold failures in a row: emit Ready=false
//	                          SuccessThreshold successes in a row: emit Ready=true
//
// Only changes are emitted. With Timing.StartReady (liveness) the state starts
// as ready, so the first emit is Ready=false after FailureThreshold failures,
// whether or not a success came first. One attempt is in flight at a time.
//
// Event sources (log, notify) push instead of polling, so readiness is seen
// as soon as the process announces it:
//   - LogMatcher: the first output line matching a regexp;
//   - NotifySocket: systemd's NOTIFY_SOCKET protocol (READY=1, STATUS=...),
//     accepted only from the process or its descendants;
//   - NewNotifyPipe/WaitNotifyFD: s6's fd:N protocol, ready at the first
//     newline, never ready if the fd is closed without one.
//
// health does not fork: exec probes run through a CommandRunner (the single
// reaper in internal/proc), and the spawner places the notify fd.
package health
