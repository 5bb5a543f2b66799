package health

import (
	"context"
	"fmt"
	"net"
	"time"
)

// tcpChecker succeeds when a TCP connection to addr is established within the
// attempt's timeout. The connection is closed at once; a peer that accepts and
// immediately closes still counts as up (kubelet semantics).
type tcpChecker struct {
	addr string
}

var _ Checker = (*tcpChecker)(nil)

// NewTCPChecker returns a checker that connects to addr (host:port).
func NewTCPChecker(addr string) (Checker, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("tcp probe: %w", err)
	}
	return &tcpChecker{addr: addr}, nil
}

func (c *tcpChecker) Check(ctx context.Context) Result {
	start := time.Now()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		if r, ok := cutShort(ctx, start, err); ok {
			return r
		}
		if r, ok := ownLimit(err, false); ok {
			return r
		}
		return failure("%v", err)
	}
	conn.Close()
	return Result{OK: true, Detail: "connected to " + c.addr}
}
