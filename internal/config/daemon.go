package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

var daemonKeys = []string{"pid_file"}

// Daemon is `daemon:` on a service whose command forks a daemon and exits
// (systemd's Type=forking with PIDFile=, supervisord's and
// process-compose's daemons): once the command exits with a success code,
// the pid written in PidFile is supervised as the process
// (internal/launch/daemon.go).
type Daemon struct {
	PidFile string // absolute: a relative one is resolved against the config's directory
}

func (l *loader) daemon(n *yaml.Node, path *keyPath, p *Process) *Daemon {
	f, ok := l.fields(n, path, daemonKeys)
	if !ok {
		return nil
	}
	v, ok := f.get("pid_file")
	if !ok {
		l.errorf(n, path, "pid_file is required").Hint = "name the file the daemon writes its pid to, such as pid_file: /run/nginx.pid"
		return nil
	}
	s, ok := l.text(v.val, path.field("pid_file"))
	if !ok {
		return nil
	}
	if s, ok = l.interp(v.val, path.field("pid_file"), s); !ok {
		return nil
	}
	if s == "" {
		l.errorf(v.val, path.field("pid_file"), "pid_file is empty")
		return nil
	}
	if p.Type != Service {
		l.errorf(n, path, "daemon applies to services only").Hint = "a oneshot or job that forks a daemon leaves it running: make it a service"
		return nil
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(l.dir, s)
	}
	return &Daemon{PidFile: filepath.Clean(s)}
}
