// Package control is podvisor's control socket: a unix socket through which
// the CLI (`podvisor restart|stop|start|signal|reload|logs`) asks a running
// podvisor to act. The protocol is HTTP/1.1 with JSON bodies (see
// docs/operate.md); the socket is created 0600 and every connection's peer
// credentials (SO_PEERCRED) are checked, so only root and podvisor's own uid
// are served, whatever the file mode ends up being.
//
// The package knows nothing of the supervisor: the server calls a Backend.
package control
