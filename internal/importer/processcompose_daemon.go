package importer

import (
	"regexp"
	"slices"
	"sync"

	"github.com/podvisor/podvisor/internal/config"
	"go.yaml.in/yaml/v3"
)

// process-compose's is_daemon (src/app/daemon.go): the command starts a
// daemon in the background and exits; when it exits with a success code
// the process is "Launched" and counts as running until its
// shutdown.command has run (at a stop), or a liveness probe fails.
// process-compose never learns the daemon's pid: it signals nothing, and
// a daemon that dies unnoticed stays "Launched". Its readiness probe checks
// the daemon (a port it serves) as for any process.
//
// podvisor can supervise the daemon itself when it knows where its pid is
// (daemon: {pid_file}); process-compose has no pid-file setting, so the
// import takes an absolute *.pid path named in the command or the
// shutdown.command as the hint. Without one, the starter becomes a oneshot:
// once it exited with success it is completed (ready once its readiness
// probe passed), and its shutdown.command, the oneshot's stop.command,
// runs at the teardown, as process-compose runs it when it stops.

// pcPidFile matches an absolute path ending in .pid: the daemon's pid file.
var pcPidFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(/[^\s'"=;&|<>()$` + "`" + `]+\.pid)\b`) })

// daemon converts is_daemon: true on p (body is the process's mapping, k
// the is_daemon key).
func (c *pcConv) daemon(p *Process, body, k *yaml.Node) {
	hint := ""
	for _, key := range []string{"command", "shutdown"} {
		n := get(body, key)
		if key == "shutdown" {
			n = get(n, "command")
		}
		if m := pcPidFile().FindStringSubmatch(scalar(n)); m != nil {
			hint = m[1]
			break
		}
	}
	if hint != "" && p.Type == config.Service {
		p.Daemon = &config.Daemon{PidFile: hint}
		note(p, c.r, c.pos(k), "daemon", "is_daemon: the command forks a daemon whose pid file "+hint+" it names; podvisor reads the pid once the command exited with success and supervises the daemon in its place: its exit is noticed and follows the restart policy (process-compose notices it only by a failed liveness probe), and after shutdown.command the stop signal reaches it")
		return
	}
	p.Type = config.Oneshot
	if p.Restart.Policy == config.Always {
		setRestart(p, config.OnFailure)
	}
	note(p, c.r, c.pos(k), "type", "is_daemon: the command forks a daemon and exits; it runs as a oneshot that, once it exited with success, is completed (ready once its readiness probe passed) until the teardown, as process-compose's launched daemon counts as running; the daemon itself is not watched, as process-compose does not watch it (name its pid file, an absolute *.pid path, in the command to have it supervised); shutdown.command runs at the teardown, and a daemon still running after it is ended by podvisor's final sweep (SIGTERM, SIGKILL 2s later)")
	if p.Live != nil {
		live := get(body, "liveness_probe")
		c.r.Entries = slices.DeleteFunc(c.r.Entries, func(e Entry) bool { return e.Kind == AsIs && e.Pos == c.pos(live) })
		c.r.Drop(c.pos(live), p.Name+".liveness_probe", "on a daemon, process-compose's liveness probe decides when the daemon counts as stopped; podvisor checks a oneshot's liveness only while it runs (the starter)")
		p.Live = nil
	}
}
