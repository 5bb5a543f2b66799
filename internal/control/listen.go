package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/client"

	"golang.org/x/sys/unix"
)

// Listen binds the control socket at path, mode 0600, creating its
// directory. A socket left by a podvisor that died (nothing accepts on it) is
// replaced; one that still answers belongs to a live podvisor and is refused
// with ErrInUse, naming its pid. Anything else at path (a regular file, a
// directory) is refused rather than deleted. Closing the listener removes the
// socket file.
func Listen(path string) (*net.UnixListener, error) {
	if err := prepareDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := clearStale(path); err != nil {
		return nil, err
	}
	// The mode must be 0600 from the first instant, not after a chmod that a
	// fast client could race. The umask is process-wide; Listen runs before
	// podvisor starts any child, so nothing else is creating files meanwhile.
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: %s was created by someone else just now", ErrInUse, path)
		}
		return nil, fmt.Errorf("cannot create control socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// clearStale removes a dead socket at path and refuses a live one or a
// non-socket.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket; remove it or set control: to another path", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		inUse := &InUseError{Path: path}
		if uc, ok := c.(*net.UnixConn); ok {
			if cred, err := peerCred(uc); err == nil {
				inUse.Pid = int(cred.Pid)
			}
		}
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		if cl, err := client.New(client.Options{Socket: path}); err == nil {
			if id, err := cl.Identity(ctx); err == nil && id.Pid > 0 {
				inUse.Pid, inUse.Config = id.Pid, id.Config
			}
		}
		cancel()
		return inUse
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("control socket %s exists and cannot be checked: %w", path, err)
	}
	// Nobody accepts: left by a podvisor that did not exit cleanly.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove stale control socket: %w", err)
	}
	return nil
}

// peerCred returns the credentials of the process at the other end of c, as
// the kernel recorded them at connect time.
func peerCred(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var (
		cred *unix.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}

// InUseError says which process answers on a control socket that Listen
// was asked to bind. It matches ErrInUse.
type InUseError struct {
	Path   string
	Pid    int    // 0 if unknown
	Config string // the other podvisor's config, if it said
}

func (e *InUseError) Error() string {
	who := "another process"
	switch {
	case e.Pid > 0 && e.Config != "":
		who = fmt.Sprintf("another podvisor (pid %d, config %s)", e.Pid, e.Config)
	case e.Pid > 0:
		who = fmt.Sprintf("another podvisor (pid %d)", e.Pid)
	}
	return fmt.Sprintf("%v: %s is listening on %s; stop it, or give this one its own socket: --control PATH, "+
		"control: in its config or $PODVISOR_CONTROL (control: off for none)", ErrInUse, who, e.Path)
}

func (e *InUseError) Unwrap() error { return ErrInUse }
