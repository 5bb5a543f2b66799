package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// socketKeys are the keys of one entry of a process's sockets list.
var socketKeys = []string{"listen", "name", "backlog", "mode", "owner", "reuse_port"}

// MaxFDStore bounds fd_store_max.
const MaxFDStore = 256

// MaxSockets bounds a process's sockets: each is an fd in every incarnation,
// and the systemd protocol numbers them from 3 up.
const MaxSockets = 64

// Socket is one listener podvisor binds for a process before its first start
// and keeps for the run, passed to every incarnation with the systemd
// socket-activation protocol (fds from 3, LISTEN_FDS, LISTEN_PID,
// LISTEN_FDNAMES).
type Socket struct {
	Listen    string // as written, e.g. tcp://0.0.0.0:8080
	Network   string // tcp, udp or unix
	Address   string // host:port, or an absolute path for unix
	Name      string // LISTEN_FDNAMES entry; defaults to the process name
	Backlog   int    // 0: the system's maximum (net.core.somaxconn)
	Mode      os.FileMode
	Owner     *User // unix only; nil keeps podvisor's
	ReusePort bool
	Pos       Pos
}

// Key identifies what is bound: two entries with the same key are the same
// listener, which a reload keeps open.
func (s Socket) Key() string {
	owner := ""
	if s.Owner != nil {
		owner = fmt.Sprintf("%d:%d", s.Owner.UID, s.Owner.GID)
	}
	return fmt.Sprintf("%s %s backlog=%d mode=%o owner=%s reuse_port=%t", s.Network, s.Address, s.Backlog, s.Mode, owner, s.ReusePort)
}

// sockets decodes a process's sockets list.
func (l *loader) sockets(proc string, n *yaml.Node, path *keyPath) []Socket {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "expected a list of sockets, got %s", describe(n)).Hint = `e.g. [{listen: "tcp://0.0.0.0:8080"}]`
		return nil
	}
	if len(n.Content) > MaxSockets {
		l.errorf(n, path, "%d sockets; the limit is %d", len(n.Content), MaxSockets)
		return nil
	}
	out := make([]Socket, 0, len(n.Content))
	for i, item := range n.Content {
		if s, ok := l.socket(proc, item, path.elem(i)); ok {
			out = append(out, s)
		}
	}
	return out
}

func (l *loader) socket(proc string, n *yaml.Node, path *keyPath) (Socket, bool) {
	s := Socket{Name: proc, Mode: 0o666, Pos: l.pos(n)}
	if n.Kind == yaml.ScalarNode { // the short form: just the address
		n = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "listen", Line: n.Line, Column: n.Column}, n}}
	}
	f, ok := l.fields(n, path, socketKeys)
	if !ok {
		return s, false
	}
	v, ok := f.get("listen")
	if !ok {
		l.errorf(n, path, "listen is required").Hint = `e.g. listen: "tcp://0.0.0.0:8080"`
		return s, false
	}
	lpath := path.field("listen")
	str, ok := l.str(v.val, lpath)
	if !ok {
		return s, false
	}
	if str, ok = l.interp(v.val, lpath, str); !ok {
		return s, false
	}
	s.Listen, s.Pos = str, l.pos(v.val)
	netw, addr, msg := ParseListen(str)
	if msg != "" {
		l.errorf(v.val, lpath, "invalid socket address %q: %s", str, msg).Hint = `use tcp://HOST:PORT, udp://HOST:PORT or unix:///ABSOLUTE/PATH`
		return s, false
	}
	s.Network, s.Address = netw, addr
	good := true
	if v, ok := f.get("name"); ok {
		if name, ok := l.str(v.val, path.field("name")); ok {
			if !ValidFDName(name) {
				l.errorf(v.val, path.field("name"), "invalid socket name %q", name).Hint = "1-255 printable characters without : or spaces"
				good = false
			}
			s.Name = name
		}
	}
	if v, ok := f.get("backlog"); ok {
		if b, ok := l.integer(v.val, path.field("backlog")); ok {
			if b < 1 || b > 65535 || netw == "udp" {
				msg := "backlog must be 1-65535"
				if netw == "udp" {
					msg = "backlog applies to stream sockets only, not udp"
				}
				l.errorf(v.val, path.field("backlog"), "%s", msg)
				good = false
			}
			s.Backlog = b
		}
	}
	if v, ok := f.get("mode"); ok {
		m, ok := l.fileMode(v.val, path.field("mode"))
		if ok && netw != "unix" {
			l.errorf(v.val, path.field("mode"), "mode applies to unix sockets only")
			ok = false
		}
		good = good && ok
		s.Mode = m
	}
	if v, ok := f.get("owner"); ok {
		if netw != "unix" {
			l.errorf(v.val, path.field("owner"), "owner applies to unix sockets only")
			good = false
		} else if s.Owner = l.user(v.val, path.field("owner")); s.Owner == nil {
			good = false
		}
	}
	if v, ok := f.get("reuse_port"); ok {
		if b, ok := l.boolean(v.val, path.field("reuse_port")); ok {
			if b && netw == "unix" {
				l.errorf(v.val, path.field("reuse_port"), "reuse_port applies to tcp and udp sockets only")
				good = false
			}
			s.ReusePort = b
		}
	}
	return s, good
}

// fileMode reads a permission mode, written in octal ("0660" or 0660).
func (l *loader) fileMode(n *yaml.Node, path *keyPath) (os.FileMode, bool) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!str" || n.ShortTag() == "!!int") {
		if m, err := strconv.ParseUint(strings.TrimPrefix(n.Value, "0o"), 8, 32); err == nil && m <= 0o777 {
			return os.FileMode(m), true
		}
	}
	l.errorf(n, path, "invalid mode %s", describeValue(n)).Hint = `an octal permission such as "0660"`
	return 0, false
}

// ParseListen splits a socket address into network and address, returning
// a message saying what is wrong, or "".
func ParseListen(s string) (network, address, msg string) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return "", "", "missing scheme"
	}
	switch scheme {
	case "tcp", "udp":
		if m := checkHostPort(rest, 1); m != "" {
			return "", "", m
		}
		return scheme, rest, ""
	case "unix":
		if !filepath.IsAbs(rest) {
			return "", "", "the path must be absolute"
		}
		if len(rest) > 107 { // sun_path holds 108 bytes with the NUL
			return "", "", "the path is longer than 107 bytes"
		}
		return scheme, filepath.Clean(rest), ""
	}
	return "", "", fmt.Sprintf("unknown scheme %q", scheme)
}

// ValidFDName is the rule for an fd name (a socket's name, FDNAME= of the fd store): at most
// 255 printable ASCII characters, without ':' (the LISTEN_FDNAMES separator).
func ValidFDName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

// checkSockets refuses the same address twice in a config, and a notify fd
// that would land on a passed socket.
func (l *loader) checkSockets(cfg *Config) {
	seen := map[string]string{}
	for _, name := range cfg.Names {
		p := cfg.Processes[name]
		path := top("processes").field(name).field("sockets")
		for _, s := range p.Sockets {
			id := s.Network + " " + s.Address
			if other, ok := seen[id]; ok {
				l.errorAt(s.Pos, path, fmt.Sprintf("%s is also a socket of %q", s.Listen, other))
				continue
			}
			seen[id] = name
		}
		if n := len(p.Sockets) + p.FDStoreMax; n > 0 && p.Ready != nil && p.Ready.Kind == ProbeNotifyFD && p.Ready.FD < 3+n {
			l.errorAt(p.Pos, top("processes").field(name).field("ready"),
				fmt.Sprintf("notify fd %d is taken by a socket or stored fd (they are fds 3-%d)", p.Ready.FD, 2+n)).Hint = fmt.Sprintf("use fd:%d or higher", 3+n)
		}
	}
}

// errorAt records an error at a position already taken from a node.
func (l *loader) errorAt(pos Pos, path *keyPath, msg string) *Error {
	e := &Error{Pos: pos, Path: path.String(), Msg: msg}
	l.errs = append(l.errs, e)
	return e
}

// sameSockets compares socket lists by what is bound and passed.
func sameSockets(a, b []Socket) bool {
	return slices.EqualFunc(a, b, func(x, y Socket) bool { return x.Key() == y.Key() && x.Name == y.Name })
}
