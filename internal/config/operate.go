package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// DefaultLogTail is how many recent lines of each process's output podvisor
// keeps for `podvisor logs` unless log.tail says otherwise.
const DefaultLogTail = 200

// MaxLogTail bounds log.tail; memory is bounded in bytes as well (see
// internal/logs.Tail), this only catches unit slips.
const MaxLogTail = 100000

// maxSocketPath is the longest path a unix socket can be bound at
// (sun_path is 108 bytes including the terminating NUL).
const maxSocketPath = 107

// control decodes the control socket path: "off", or a path (interpolated;
// relative to the config file's directory).
func (l *loader) control(n *yaml.Node, path *keyPath) string {
	s, ok := l.str(n, path)
	if !ok || s == "off" {
		return s
	}
	p := l.path(n, path)
	if p == "" {
		return ""
	}
	if len(p) > maxSocketPath {
		l.errorf(n, path, "control socket path %q is %d bytes, longer than the %d a unix socket allows", p, len(p), maxSocketPath).Hint =
			"choose a shorter path, such as /run/podvisor/control.sock"
		return ""
	}
	if filepath.Base(p) == "/" {
		l.errorf(n, path, "control socket path %q is a directory", p).Hint = "name the socket file, such as /run/podvisor/control.sock"
		return ""
	}
	return p
}

// logTail decodes log.tail: a number of lines, 0 to MaxLogTail.
func (l *loader) logTail(n *yaml.Node, path *keyPath) int {
	v, ok := l.integer(n, path)
	if !ok {
		return DefaultLogTail
	}
	if v < 0 || v > MaxLogTail {
		l.errorf(n, path, "log tail %d is out of range 0-%d", v, MaxLogTail).Hint = "the number of recent lines kept per process; 0 keeps none"
		return DefaultLogTail
	}
	return v
}
