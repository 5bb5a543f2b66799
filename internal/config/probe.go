package config

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	readyKinds = []string{"http", "tcp", "grpc", "exec", "file", "log", "notify"}
	liveKinds  = []string{"http", "tcp", "grpc", "exec", "file"}
	probeKeys  = []string{"http", "tcp", "grpc", "exec", "file", "log", "notify", "service", "tls", "h2c",
		"start_interval", "interval", "timeout", "initial_delay", "success_threshold", "failure_threshold", "stop_timeout"}
	// readyProbeKeys are a ready check's keys: the probe keys and
	// while_stopping.
	readyProbeKeys = slices.Concat(probeKeys, []string{"while_stopping"})
)

// probeRole says which of a process's checks a probe block is.
type probeRole uint8

const (
	roleReady probeRole = iota
	roleLive
	roleStartup
)

func (r probeRole) String() string {
	return [...]string{"ready", "live", "startup"}[r]
}

// MaxNotifyFD is the highest fd:N accepted for notify; the child gets every
// fd from 3 to N reserved, so N stays small.
const MaxNotifyFD = 1023

// probe decodes a ready, live or startup block: exactly one kind plus
// optional timing (and, for ready, while_stopping).
func (l *loader) probe(n *yaml.Node, path *keyPath, role probeRole) *Probe {
	var f fieldSet
	var ok bool
	if role == roleReady {
		f, ok = l.fields(n, path, readyProbeKeys)
	} else {
		f, ok = l.fields(n, path, probeKeys)
	}
	if !ok {
		return nil
	}
	allowed := readyKinds
	if role != roleReady {
		allowed = liveKinds
	}
	var buf [7]pair
	kinds := buf[:0] // in document order
	for _, p := range f {
		if contains(readyKinds, p.name) {
			kinds = append(kinds, p)
		}
	}

	p := defaultProbe()
	switch {
	case len(kinds) == 0:
		l.errorf(n, path, "no check given").Hint = "set one of " + strings.Join(allowed, ", ")
	case len(kinds) > 1:
		l.errorf(kinds[1].key, path, "both %s and %s given: set exactly one kind of check", kinds[0].name, kinds[1].name)
	case !contains(allowed, kinds[0].name):
		why := "it shows readiness, not liveness"
		if role == roleStartup {
			why = "a startup check counts failed attempts, and it makes none"
		}
		l.errorf(kinds[0].key, path, "%s cannot use %s: %s", role, kinds[0].name, why).Hint =
			"use one of " + strings.Join(liveKinds, ", ") + ", or move it to ready"
	default:
		l.probeTarget(&p, kinds[0], path)
	}

	l.protocolKeys(&p, f, path)
	if v, ok := f.get("start_interval"); ok {
		p.StartInterval, _ = l.duration(v.val, path.field("start_interval"), true)
	}
	if v, ok := f.get("interval"); ok {
		p.Interval, _ = l.duration(v.val, path.field("interval"), true)
	}
	if v, ok := f.get("timeout"); ok {
		p.Timeout, _ = l.duration(v.val, path.field("timeout"), true)
	}
	if v, ok := f.get("stop_timeout"); ok {
		p.StopTimeout, _ = l.duration(v.val, path.field("stop_timeout"), false)
	}
	if v, ok := f.get("initial_delay"); ok {
		p.InitialDelay, _ = l.duration(v.val, path.field("initial_delay"), false)
	}
	if v, ok := f.get("success_threshold"); ok {
		p.SuccessThreshold = l.threshold(v.val, path.field("success_threshold"))
	}
	if v, ok := f.get("failure_threshold"); ok {
		p.FailureThreshold = l.threshold(v.val, path.field("failure_threshold"))
	}
	if v, ok := f.get("while_stopping"); ok {
		p.WhileStopping, _ = l.boolean(v.val, path.field("while_stopping"))
	}
	return &p
}

func (l *loader) threshold(n *yaml.Node, path *keyPath) int {
	v, ok := l.integer(n, path)
	if ok && v < 1 {
		l.errorf(n, path, "threshold must be at least 1")
	}
	return v
}

// probeTarget decodes the value of the probe's one kind.
func (l *loader) probeTarget(p *Probe, kind pair, path *keyPath) {
	path = path.field(kind.name)
	n := kind.val
	if kind.name == "exec" {
		p.Kind = ProbeExec
		p.Command, p.Shell, _ = l.command(n, path)
		return
	}
	if kind.name == "file" {
		p.Kind = ProbeFile
		p.Target = l.path(n, path)
		return
	}
	s, ok := l.str(n, path)
	if !ok {
		return
	}
	if kind.name != "notify" {
		if s, ok = l.interp(n, path, s); !ok {
			return
		}
	}
	p.Target = s
	switch kind.name {
	case "http":
		p.Kind = ProbeHTTP
		if msg := checkHTTPURL(s); msg != "" {
			l.errorf(n, path, "invalid http check %q: %s", s, msg).Hint = "e.g. http://127.0.0.1:8080/healthz"
		}
	case "tcp":
		p.Kind = ProbeTCP
		if msg := checkHostPort(s, 1); msg != "" {
			l.errorf(n, path, "invalid tcp check %q: %s", s, msg).Hint = "e.g. 127.0.0.1:5432"
		}
	case "grpc":
		p.Kind = ProbeGRPC
		if msg := checkHostPort(s, 1); msg != "" {
			l.errorf(n, path, "invalid grpc check %q: %s", s, msg).Hint = "e.g. 127.0.0.1:9090 (the gRPC server's host:port)"
		}
	case "log":
		p.Kind = ProbeLog
		if s == "" {
			l.errorf(n, path, "log pattern is empty")
			return
		}
		re, err := regexp.Compile(s)
		if err != nil {
			l.errorf(n, path, "invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			return
		}
		p.Regexp = re
	case "notify":
		l.notify(p, n, path, s)
	}
}

// protocolKeys decodes the keys that refine one kind: service and tls
// (grpc), h2c (http); each is an error on any other kind.
func (l *loader) protocolKeys(p *Probe, f fieldSet, path *keyPath) {
	only := func(key string, kind ProbeKind, hint string) (pair, bool) {
		v, ok := f.get(key)
		if ok && p.Kind != kind {
			l.errorf(v.key, path, "%s applies only to a %s check", key, kind).Hint = hint
			return v, false
		}
		return v, ok
	}
	if v, ok := only("service", ProbeGRPC, "e.g. grpc: 127.0.0.1:9090 with service: my.Service"); ok {
		if s, ok := l.str(v.val, path.field("service")); ok {
			p.Service, _ = l.interp(v.val, path.field("service"), s)
		}
	}
	if v, ok := only("tls", ProbeGRPC, "for https use an https:// URL in http"); ok {
		p.TLS, _ = l.boolean(v.val, path.field("tls"))
	}
	if v, ok := only("h2c", ProbeHTTP, "a grpc check speaks HTTP/2 already"); ok {
		p.H2C, _ = l.boolean(v.val, path.field("h2c"))
		if p.H2C && !strings.HasPrefix(strings.ToLower(p.Target), "http://") {
			l.errorf(v.val, path.field("h2c"), "h2c needs an http:// URL (it is HTTP/2 without TLS)").Hint = "for HTTP/2 over TLS use an https:// URL without h2c"
		}
	}
}

func checkHTTPURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must start with http:// or https://"
	case u.Hostname() == "":
		return "no host"
	}
	if port := u.Port(); port != "" {
		if v, err := strconv.Atoi(port); err != nil || v < 1 || v > 65535 {
			return "port " + port + " is out of range 1-65535"
		}
	}
	return ""
}

// notify decodes `systemd` (NOTIFY_SOCKET, READY=1) or `fd:N`, N >= 3 since
// 0-2 are stdin, stdout and stderr.
func (l *loader) notify(p *Probe, n *yaml.Node, path *keyPath, s string) {
	const hint = `use "systemd" or "fd:N" with N from 3 to 1023`
	if s == "systemd" {
		p.Kind = ProbeNotifySystemd
		return
	}
	num, ok := strings.CutPrefix(s, "fd:")
	if !ok || !isDigits(num) {
		l.errorf(n, path, "invalid notify %q", s).Hint = hint
		return
	}
	fd, err := strconv.Atoi(num)
	if err != nil || fd < 3 || fd > MaxNotifyFD {
		l.errorf(n, path, "notify fd %s is out of range 3-%d", num, MaxNotifyFD).Hint = "0, 1 and 2 are stdin, stdout and stderr"
		return
	}
	p.Kind, p.FD = ProbeNotifyFD, fd
}
