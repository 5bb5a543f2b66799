package health

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Accept and close at once: an open port that hangs up still counts.
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tests := []struct {
		name, addr string
		ok         bool
		detail     string
	}{
		{"listening", l.Addr().String(), true, "connected to " + l.Addr().String()},
		{"closed port", closedPort(t), false, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewTCPChecker(tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			r, took := attempt(c, 5*time.Second)
			if r.OK != tt.ok || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %+v, want OK=%v with %q", r, tt.ok, tt.detail)
			}
			if took > time.Second {
				t.Errorf("took %s, want an immediate answer", took)
			}
		})
	}
}

// A peer that never answers the SYN (a full accept queue drops it, like a
// firewall's DROP) fails at the attempt's timeout, not later.
func TestTCPBlackhole(t *testing.T) {
	addr := fullListener(t)
	c, err := NewTCPChecker(addr)
	if err != nil {
		t.Fatal(err)
	}
	r, took := attempt(c, 200*time.Millisecond)
	if r.OK || r.Detail != "timeout after 200ms" {
		t.Errorf("got %+v, want timeout after 200ms", r)
	}
	if took > 2*time.Second {
		t.Errorf("took %s with a 200ms timeout", took)
	}
}

// fullListener returns the address of a loopback socket listening with a
// backlog of 0 whose accept queue is already full, so further SYNs are
// dropped.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	filler, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { filler.Close() })
	return addr
}

func TestNewTCPCheckerError(t *testing.T) {
	if _, err := NewTCPChecker("no-port"); err == nil {
		t.Error("accepted an address without a port")
	}
}
