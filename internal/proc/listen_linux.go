package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Socket activation (the systemd protocol, sd_listen_fds(3)): a child gets
// its listening sockets as fds 3, 4, ... with LISTEN_FDS (how many),
// LISTEN_FDNAMES (their names, colon-separated) and LISTEN_PID, which must
// be the child's own pid: libraries ignore the fds otherwise, so that a
// grandchild that inherited the environment does not take them too.
//
// podvisor forks with Go's syscall.StartProcess, whose child runs no code of
// ours between fork and exec, and the pid is known only after the fork, so
// LISTEN_PID cannot be put in the environment beforehand. Instead a child
// with sockets first execs podvisor's own binary (/proc/self/exe, which
// stays valid even if the file was replaced) with argv[0] set to
// pidShimArg0; the package's init sees that, sets LISTEN_PID=getpid()
// and execs the real program. The pid is the same across both execs, the
// fds are already in place, and the cost is one extra exec of podvisor (a
// few milliseconds) per start of such a process only. A binary that imports
// this package (podvisor, its tests) can act as the shim. The watchdog's
// WATCHDOG_PID (sd_watchdog_enabled(3)) is the same kind of variable and
// goes the same way (Spec.PidEnv).
const pidShimArg0 = "podvisor-listen-pid"

// pidVars are the variables the shim may set to the child's pid.
var pidVars = []string{"LISTEN_PID", "WATCHDOG_PID"}

// ListenFDsStart is the first fd of the systemd protocol.
const ListenFDsStart = 3

func init() {
	if len(os.Args) >= 4 && os.Args[0] == pidShimArg0 {
		pidShim(strings.Split(os.Args[1], ","), os.Args[2], os.Args[3:])
	}
}

// pidShim execs path with each of names (pidVars only) set to this
// process's pid, after applying the other names, the shim's options
// (shimOptions, limits_linux.go); it does not return.
func pidShim(names []string, path string, argv []string) {
	pid := strconv.Itoa(os.Getpid())
	env := make([]string, 0, len(os.Environ())+len(names))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			env = append(env, kv)
		}
	}
	for _, n := range names {
		if slices.Contains(pidVars, n) {
			env = append(env, n+"="+pid)
		}
	}
	shimPrepare(names)
	err := unix.Exec(path, argv, env)
	fmt.Fprintf(os.Stderr, "podvisor: exec %q: %v\n", path, err)
	code := 126
	if errors.Is(err, unix.ENOENT) {
		code = 127
	}
	os.Exit(code)
}

// withPidShim rewrites cmd so the child passes through the shim, which
// sets names to its pid.
func withPidShim(names []string, path string, argv []string) (string, []string) {
	return "/proc/self/exe", append([]string{pidShimArg0, strings.Join(names, ","), path}, argv...)
}

// ListenOptions are the settings of one bound socket.
type ListenOptions struct {
	Backlog   int         // 0: the system's maximum
	ReusePort bool        // SO_REUSEPORT (tcp, udp)
	Mode      os.FileMode // unix: the socket file's permissions
	UID, GID  int         // unix: the socket file's owner; -1 keeps podvisor's

	// afterBind (tests) runs between the bind and the chmod of a unix
	// socket's file: the window in which the path can be swapped.
	afterBind func(path string)
}

// Bind binds and (for stream sockets) listens on network ("tcp", "udp" or
// "unix") address, returning the socket as a blocking *os.File that podvisor
// keeps and passes to children. A unix socket's stale file is replaced only
// if it is a socket nobody listens on.
func Bind(network, address string, o ListenOptions) (*os.File, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if !o.ReusePort {
			return nil
		}
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	ctx := context.Background()
	var (
		f   *os.File
		err error
	)
	switch network {
	case "udp":
		var pc net.PacketConn
		if pc, err = lc.ListenPacket(ctx, network, address); err != nil {
			return nil, bindError(network, address, err)
		}
		f, err = pc.(*net.UDPConn).File()
		pc.Close()
	case "unix":
		if err := removeStale(address); err != nil {
			return nil, err
		}
		var ln net.Listener
		if ln, err = lc.Listen(ctx, network, address); err != nil {
			return nil, bindError(network, address, err)
		}
		ul := ln.(*net.UnixListener)
		ul.SetUnlinkOnClose(false) // the file stays for the kept socket
		f, err = ul.File()
		ul.Close()
		if err == nil {
			err = setFileOwner(address, o)
		}
		if err != nil {
			os.Remove(address)
		}
	default:
		var ln net.Listener
		if ln, err = lc.Listen(ctx, network, address); err != nil {
			return nil, bindError(network, address, err)
		}
		f, err = ln.(*net.TCPListener).File()
		ln.Close()
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("%s://%s: %w", network, address, err)
	}
	// podvisor never accepts: the children get a blocking socket, as
	// systemd passes them (a C server doing blocking accept(2) expects it).
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	if o.Backlog > 0 && network != "udp" {
		// listen(2) on a listening socket changes its backlog.
		if err := unix.Listen(int(f.Fd()), o.Backlog); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s://%s: backlog: %w", network, address, err)
		}
	}
	return f, nil
}

func setFileOwner(path string, o ListenOptions) error {
	if o.afterBind != nil {
		o.afterBind(path)
	}
	// Whoever can write the socket's directory can put a symlink at path
	// after the bind; chmod and chown by path would follow it as root. So
	// the path is opened without following, must be a socket, and the mode
	// and owner are set on that inode: chmod through /proc/self/fd/N
	// (there is no fchmod for an O_PATH descriptor), chown with
	// AT_EMPTY_PATH.
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("unix://%s: open the bound socket file: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("unix://%s: stat the bound socket file: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return fmt.Errorf("unix://%s: not a socket any more after the bind (something replaced it, e.g. a symlink); check who can write %s", path, filepath.Dir(path))
	}
	if err := os.Chmod("/proc/self/fd/"+strconv.Itoa(fd), o.Mode.Perm()); err != nil {
		return fmt.Errorf("unix://%s: set the mode through /proc/self/fd (is /proc mounted?): %w", path, err)
	}
	if o.UID >= 0 || o.GID >= 0 {
		if err := unix.Fchownat(fd, "", o.UID, o.GID, unix.AT_EMPTY_PATH); err != nil {
			return fmt.Errorf("unix://%s: set the owner: %w", path, err)
		}
	}
	return nil
}

// removeStale removes a socket file left by an earlier run. Anything else at
// the path, or a socket something still listens on, is an error.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("unix://%s: the path exists and is not a socket", path)
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("unix://%s: already in use (a server answers on it)", path)
	}
	return os.Remove(path)
}

// BindError is a failed bind, said in a user's words; errors.Is sees the
// errno.
type BindError struct {
	Msg string
	Err error
}

func (e *BindError) Error() string { return e.Msg }

func (e *BindError) Unwrap() error { return e.Err }

// bindError explains a failed bind: for an address in use, who holds it when
// /proc shows it; for a unix socket, a directory that cannot take it.
func bindError(network, address string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &BindError{fmt.Sprintf("%s://%s: %v", network, address, err), err}
	}
	msg := fmt.Sprintf("%s://%s: %s", network, address, errno.Error())
	switch {
	case errno == unix.EADDRINUSE:
		if _, port, perr := net.SplitHostPort(address); perr == nil {
			if p, aerr := strconv.Atoi(port); aerr == nil {
				if pid, comm := PortHolder(network, p); pid > 0 {
					msg += fmt.Sprintf(" (by pid %d, %s)", pid, comm)
				}
			}
		}
	case network == "unix" && errno == unix.EROFS:
		msg = fmt.Sprintf("unix://%s: directory %s is on a read-only file system", address, filepath.Dir(address))
	case network == "unix" && (errno == unix.EACCES || errno == unix.ENOENT || errno == unix.ENOTDIR):
		msg = fmt.Sprintf("unix://%s: cannot create a socket in directory %s: %s", address, filepath.Dir(address), errno.Error())
	case errno == unix.EACCES:
		msg += " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
	}
	return &BindError{msg, errno}
}

// PortHolder returns the pid and command name of a process holding a socket
// bound to port (a listening tcp socket, or a udp one), or 0 when /proc does
// not show one (another user's process, without privileges).
func PortHolder(network string, port int) (int, string) {
	state := "0A" // TCP_LISTEN
	if network == "udp" {
		state = "07" // TCP_CLOSE: how /proc shows a bound udp socket
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/" + network, "/proc/net/" + network + "6"} {
		socketInodes(f, port, state, inodes)
	}
	if len(inodes) == 0 {
		return 0, ""
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + p.Name() + "/fd")
		for _, fd := range fds {
			link, err := os.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name())
			if err != nil {
				continue
			}
			if ino, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
				comm, _ := os.ReadFile("/proc/" + p.Name() + "/comm")
				return pid, strings.TrimSpace(string(comm))
			}
		}
	}
	return 0, ""
}

// socketInodes adds the inodes of the sockets in /proc/net table file bound
// to port in state.
func socketInodes(file string, port int, state string, into map[string]bool) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != state {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
			into[fields[9]] = true
		}
	}
}
