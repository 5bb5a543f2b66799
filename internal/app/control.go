package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
)

// controlShutdown bounds how long exit waits for control clients (a
// `podvisor logs -f` follower is cut off then).
const controlShutdown = time.Second

// ControlPath picks the control socket path for `run`: the --control flag,
// else the config's control:, else $PODVISOR_CONTROL, else the default for
// this user. explicit is false only for the default.
func ControlPath(flagPath string, cfg *config.Config) (path string, explicit bool) {
	switch {
	case flagPath != "":
		return flagPath, true
	case cfg.Control != "":
		return cfg.Control, true
	case os.Getenv("PODVISOR_CONTROL") != "":
		return os.Getenv("PODVISOR_CONTROL"), true
	}
	return control.DefaultPath(os.Geteuid(), os.Getenv), false
}

// startControl binds the control socket and serves it for backend. It
// returns a function that stops serving and removes the socket. An error is
// returned when the socket was asked for explicitly, and when another live
// podvisor answers at the default place: two podvisors must never share a
// socket silently (`podvisor restart` would reach the other one). A default
// place that cannot be written (a read-only /run) only costs the socket:
// podvisor then runs without it and says so.
func startControl(path string, explicit bool, id control.Identity, backend control.Backend, routes map[string]http.Handler, log *slog.Logger) (func(), error) {
	if path == control.Off {
		log.Info("control socket disabled")
		return func() {}, nil
	}
	ln, inherited, err := inheritedControl(path)
	if err == nil && ln == nil {
		ln, err = control.Listen(path)
	}
	if err != nil {
		var inUse *control.InUseError
		switch {
		case !explicit && errors.As(err, &inUse) && isAncestor(inUse.Pid):
			// A podvisor run by a podvisor (a fat pod's entrypoint under
			// kube play): the default socket is its parent's, and that
			// is where the operate verbs should go.
			log.Warn(fmt.Sprintf("running without a control socket: the default one belongs to the podvisor this one runs under (pid %d); "+
				"set control: in the config (or --control) to give this one its own", inUse.Pid))
			return func() {}, nil
		case explicit || errors.Is(err, control.ErrInUse):
			return nil, err
		}
		log.Warn(fmt.Sprintf("running without a control socket: %v; set control: in the config (or --control) to a writable path", err))
		return func() {}, nil
	}
	srv := control.NewServer(backend, log)
	srv.Identity = id
	for pattern, h := range routes {
		srv.Handle(pattern, h)
	}
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("control socket", "err", err)
		}
	}()
	log.Info("control socket ready", "path", path)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), controlShutdown)
		defer cancel()
		_ = srv.Shutdown(ctx)
		inherited.remove()
	}, nil
}

// InheritedControlEnv hands a control socket bound before kube play entered its
// private mount namespace to the podvisor run in it: "LISTENFD DIRFD PATH".
// The socket is bound outside the namespace, where the operate verbs can
// reach it, even when a volume covers its directory (/run, /tmp).
const InheritedControlEnv = "PODVISOR_CONTROL_INHERITED"

// inheritedSocket removes an inherited socket's file through the directory
// descriptor bound with it (the path itself may be hidden by a volume).
type inheritedSocket struct {
	dirfd int
	name  string
}

func (s *inheritedSocket) remove() {
	if s == nil {
		return
	}
	_ = unix.Unlinkat(s.dirfd, s.name, 0)
	unix.Close(s.dirfd)
}

// inheritedControl returns the listener kube play bound for path, if any.
func inheritedControl(path string) (net.Listener, *inheritedSocket, error) {
	v, ok := os.LookupEnv(InheritedControlEnv)
	if !ok {
		return nil, nil, nil
	}
	os.Unsetenv(InheritedControlEnv) // not for the children
	var lnfd, dirfd int
	var p string
	if n, err := fmt.Sscanf(v, "%d %d %s", &lnfd, &dirfd, &p); err != nil || n != 3 || p != path {
		return nil, nil, fmt.Errorf("%s=%q: not a control socket kube play bound for %s", InheritedControlEnv, v, path)
	}
	unix.CloseOnExec(lnfd)
	unix.CloseOnExec(dirfd)
	f := os.NewFile(uintptr(lnfd), path)
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("inherited control socket %s: %w", path, err)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the path may name another file in here
	}
	return ln, &inheritedSocket{dirfd: dirfd, name: filepath.Base(path)}, nil
}

// BindControlForNamespace binds the control socket of a kube play run
// before the run enters its mount namespace, and returns the environment
// entry that hands it over (or "" when the run has none: off, or a default
// place that cannot be written).
func BindControlForNamespace(path string, explicit bool) (string, error) {
	if path == control.Off {
		return "", nil
	}
	ln, err := control.Listen(path)
	if err != nil {
		if explicit || errors.Is(err, control.ErrInUse) {
			return "", err
		}
		return "", nil // the run will say it has no socket
	}
	ln.SetUnlinkOnClose(false)
	f, err := ln.File() // a duplicate; the listener's own fd closes at exec
	if err != nil {
		ln.Close()
		return "", err
	}
	dirfd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY, 0) // no O_CLOEXEC: it crosses the exec
	if err != nil {
		ln.Close()
		f.Close()
		return "", fmt.Errorf("control socket directory: %w", err)
	}
	lnfd, err := unix.Dup(int(f.Fd())) // dup(2) leaves close-on-exec off
	f.Close()
	if err != nil {
		unix.Close(dirfd)
		return "", err
	}
	return fmt.Sprintf("%s=%d %d %s", InheritedControlEnv, lnfd, dirfd, path), nil
}

// isAncestor reports whether pid is an ancestor of this process.
func isAncestor(pid int) bool {
	if pid <= 0 {
		return false
	}
	for p, hops := os.Getppid(), 0; p > 1 && hops < 64; hops++ {
		if p == pid {
			return true
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			return false
		}
		// The ppid is the second field after the command's closing ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			return false
		}
		if p, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
	}
	return pid == 1 && os.Getpid() != 1
}
