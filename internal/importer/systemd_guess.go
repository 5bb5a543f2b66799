package importer

// Type=forking without PIDFile= (issue 37). systemd then guesses the main
// pid (GuessMainPID=yes, its default): once the start command has exited,
// the one process left in the unit's cgroup. When there are several
// (celery's `multi start` of several nodes, podman's conmon per
// container), it has no main pid: it cannot tell when the daemon dies, so
// Restart= never fires on that, and ExecStop= (or the cgroup's kill) ends
// what is left at stop (systemd.service(5), GuessMainPID=).
//
// podvisor names a main pid only from a pid file or MAINPID= and has no
// unit cgroup to guess from, so the closest it comes is systemd's
// no-main-pid case: a oneshot that is done (and ready) when the start
// command exits with success, whose ExecStop= runs at teardown as the
// stop.command of a completed process, the daemons' leftovers ended by the
// final sweep. What podvisor does not do, and says: notice the daemon's
// death (no restart, no failure), or signal it on a stop without an
// ExecStop=.
//
// Why podvisor does not guess as systemd does: systemd's answer comes from
// the unit's cgroup, which holds every process the start command left,
// double-forked or not. podvisor has a cgroup per process only for one
// with resources:, and only where its cgroup is writable (docs/resources.md),
// so the import cannot count on one; without it, a daemon that called setsid has
// left the process group, and once its parent has exited nothing says
// which process it came from (an orphan of podvisor is only known to run
// as some user). Snapshotting the leader's descendants before it exits
// races the short-lived intermediate fork. A guess would have to be a
// launch-time feature (adopt the single member of the process's cgroup
// once the command exited), not an import rule.

import (
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// forkingGuess converts a Type=forking unit without PIDFile=. daemon is
// the start command as a shell command without the exec, or "" when it is
// an argv (startCommand).
func (c *sdConv) forkingGuess(f *unitFile, p *Process, svc []iniKey, daemon string) {
	p.Type = config.Oneshot
	if daemon != "" { // the shell must go on after the daemon forks: no exec
		p.Command, p.Shell = shellForm(daemon), true
	}
	how := "Type=forking without PIDFile=: systemd guesses the daemon's main pid from the unit's cgroup, podvisor cannot; " +
		"a oneshot, done when the start command exits with success, the daemon left running unsupervised (its death is not noticed: no restart, no failure)"
	if stop, ok := last(svc, "ExecStop"); ok && strings.TrimSpace(stop.Value) != "" {
		how += "; ExecStop= runs at teardown"
	} else {
		how += "; without ExecStop= it gets SIGTERM only in podvisor's final sweep"
	}
	note(p, c.r, f.src.Path, "type", how+". Add PIDFile= (or run it in the foreground) to supervise it")
}
