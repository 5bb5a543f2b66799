package importer

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// socketUnit converts a .socket unit (docs/import.md) into sockets: of
// the service it activates (Service=, else the unit of the same name):
// podvisor binds them before the first start and passes them with
// LISTEN_FDS, as systemd does (docs/reference.md, sockets).
func (c *sdConv) socketUnit(so *unitFile) {
	r := c.r
	target := so.name + ".service"
	if k, ok := last(so.sec["Socket"], "Service"); ok {
		target = k.Value
	}
	f, ok := c.byUnit[target]
	var p *Process
	if ok {
		p = c.m.Process(sanitizeName(f.name))
	}
	if p == nil {
		r.Fail(so.src.Path, so.name+".socket", "activates "+target+", which is not among the imported units (or did not convert); import it too")
		return
	}
	var name string
	if k, ok := last(so.sec["Socket"], "FileDescriptorName"); ok && config.ValidFDName(k.Value) {
		name = k.Value
	} else if ok {
		r.Fail(kpos(so, k), so.name+".socket: FileDescriptorName", fmt.Sprintf("%q is not 1-255 printable characters without \":\"", k.Value))
	}
	var opts config.Socket
	for _, k := range so.sec["Socket"] {
		pos, what := kpos(so, k), so.name+".socket: "+k.Name
		switch k.Name {
		case "ListenStream", "ListenDatagram":
			if strings.TrimSpace(k.Value) == "" { // an empty one resets the list
				p.Sockets = nil
				continue
			}
			sk, why := socketAddr(k.Name, k.Value)
			if why != "" {
				r.Fail(pos, what, why)
				continue
			}
			sk.Name = name
			p.Sockets = append(p.Sockets, sk)
			r.AsIs(pos, what+" ("+p.Name+".sockets)")
		case "Accept":
			if on, _ := parseBool(k.Value); on {
				r.Fail(pos, what, "Accept=yes starts one service instance per connection; podvisor passes the listener to one process (Accept=no): make the service accept itself")
			} else {
				r.AsIs(pos, what)
			}
		case "Backlog":
			if n, err := strconv.Atoi(k.Value); err == nil && n >= 1 && n <= 65535 {
				opts.Backlog = n
				r.AsIs(pos, what)
			} else {
				r.Fail(pos, what, fmt.Sprintf("%q is not 1..65535", k.Value))
			}
		case "SocketMode":
			if n, err := strconv.ParseUint(k.Value, 8, 32); err == nil && n <= 0o777 {
				opts.Mode = os.FileMode(n)
				r.AsIs(pos, what)
			} else {
				r.Fail(pos, what, fmt.Sprintf("%q is not octal permissions", k.Value))
			}
		case "ReusePort":
			opts.ReusePort, _ = parseBool(k.Value)
			r.AsIs(pos, what)
		case "Service", "FileDescriptorName":
			r.AsIs(pos, what)
		default:
			r.Drop(pos, what, "no sockets: key for it; podvisor binds the address with its defaults (docs/sockets.md)")
		}
	}
	for i := range p.Sockets {
		sk := &p.Sockets[i]
		switch sk.Network { // systemd applies each to the kinds it fits
		case "unix":
			sk.Backlog, sk.Mode = opts.Backlog, opts.Mode
		case "tcp":
			sk.Backlog, sk.ReusePort = opts.Backlog, opts.ReusePort
		case "udp":
			sk.ReusePort = opts.ReusePort
		}
	}
	for _, k := range so.sec["Unit"] {
		r.Drop(kpos(so, k), so.name+".socket: [Unit] "+k.Name, "podvisor binds the sockets before the first start of the process; no order to keep")
	}
	for _, k := range so.sec["Install"] {
		r.Drop(kpos(so, k), "[Install] "+k.Name, "podvisor starts every process it lists; installation targets have no meaning here")
	}
}

// socketAddr converts a ListenStream= or ListenDatagram= value; why says
// what podvisor cannot bind.
func socketAddr(key, v string) (config.Socket, string) {
	netw := "tcp"
	if key == "ListenDatagram" {
		netw = "udp"
	}
	switch {
	case strings.HasPrefix(v, "/"):
		if netw == "udp" {
			return config.Socket{}, "a unix datagram socket; podvisor binds unix stream sockets only"
		}
		n, a, msg := config.ParseListen("unix://" + v)
		if msg != "" {
			return config.Socket{}, fmt.Sprintf("%q: %s", v, msg)
		}
		return config.Socket{Listen: "unix://" + v, Network: n, Address: a}, ""
	case strings.HasPrefix(v, "@"):
		return config.Socket{}, "an abstract unix socket; podvisor binds unix sockets with a path only"
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 || n > 65535 {
			return config.Socket{}, fmt.Sprintf("port %d is not 1..65535", n)
		}
		v = "[::]:" + v // systemd: a port alone listens on every address, IPv6 and IPv4
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || port == "" {
		return config.Socket{}, fmt.Sprintf("%q is not a port, HOST:PORT or an absolute path", v)
	}
	listen := netw + "://" + net.JoinHostPort(host, port)
	n, a, msg := config.ParseListen(listen)
	if msg != "" {
		return config.Socket{}, fmt.Sprintf("%q: %s", v, msg)
	}
	return config.Socket{Listen: listen, Network: n, Address: a}, ""
}
