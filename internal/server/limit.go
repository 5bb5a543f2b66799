package server

import (
	"net"
	"sync"
)

// MaxConns bounds the HTTP connections open at once. Every connection costs
// podvisor a file descriptor; without a cap, clients could take the fds its
// probes and children need. Past the cap, new connections wait in the
// kernel's accept queue until one closes.
const MaxConns = 64

// LimitListener returns a listener that has at most n accepted connections
// open at a time.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{} // one token per open connection
	done      chan struct{} // closed by Close: a blocked Accept returns
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
