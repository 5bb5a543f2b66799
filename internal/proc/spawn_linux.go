package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxNotifyFD bounds Spec.NotifyFD; lower slots are closed in the child, so a
// huge number would only waste work.
const MaxNotifyFD = 1023

// Spec describes one child process.
type Spec struct {
	Argv []string // Argv[0] is looked up in the PATH of Env (else podvisor's PATH) unless it contains a slash
	Env  []string // the child's whole environment; nil inherits podvisor's (as os/exec does)
	Dir  string   // working directory; "" inherits podvisor's ("/" with Root)

	// Root, if set, is the root directory the child runs in, in a mount
	// namespace of its own (root_linux.go); Argv[0], Dir and the PATH
	// search are then resolved inside it. Needs podvisor to be root.
	Root string

	// Cred switches user and group; nil keeps podvisor's. Only root can switch,
	// so a non-root podvisor refuses (never silently running as itself).
	Cred *Cred

	// Stdout and Stderr become fds 1 and 2 (normally pipe write ends; passing
	// *os.File means os/exec starts no copy goroutines). nil means /dev/null.
	// The caller closes its copies after Spawn returns. Stdin likewise
	// becomes fd 0 (a pipe podvisor holds open, or a terminal); nil means
	// /dev/null.
	Stdin, Stdout, Stderr *os.File

	// Terminal: Stdin is a terminal (a pty's slave), which the child makes
	// its controlling terminal in a session of its own (setsid, then
	// TIOCSCTTY on fd 0). The session's process group is still the child's
	// own, so Signal reaches it as any other child's.
	Terminal bool

	// NotifyFile, if not nil, becomes fd NotifyFD (3..MaxNotifyFD) in the child;
	// fds between 3 and NotifyFD are closed.
	NotifyFD   int
	NotifyFile *os.File

	// ListenFiles, if any, become fds 3, 4, ... in the child, which then
	// gets LISTEN_PID set to its own pid (listen_linux.go); the caller puts
	// LISTEN_FDS and LISTEN_FDNAMES in Env. NotifyFD must lie above them.
	ListenFiles []*os.File

	// PidEnv names variables (WATCHDOG_PID) the child gets set to its own
	// pid, as LISTEN_PID is with ListenFiles (listen_linux.go).
	PidEnv []string

	// DeathSignal is sent to the child by the kernel if podvisor dies (for
	// example when it is SIGKILLed while not PID 1); 0 means none. Limits: it
	// reaches direct children only, and the kernel clears it when the child
	// execs a set-user-ID or set-group-ID program.
	DeathSignal syscall.Signal

	// OOMScoreAdj, if not nil, is the child's oom_score_adj (-1000..1000),
	// in place before it execs. A value below podvisor's own minimum
	// (normally: negative) needs CAP_SYS_RESOURCE.
	OOMScoreAdj *int

	// Rlimits are set, Umask (if not nil) and NoNewPrivs applied before
	// the program runs (limits_linux.go).
	Rlimits    []Rlimit
	Umask      *uint32
	NoNewPrivs bool
	// AmbientCaps are capabilities (numbers) a child with a Cred keeps
	// across its exec: Go's fork child adds them to its permitted,
	// inheritable and ambient sets after the switch of user.
	AmbientCaps []uintptr
	// Cgroup, if not nil, is the cgroup the child starts in, before it
	// execs (internal/cgroup): cloned into it on v2, forked from a spawner
	// thread moved into it on v1.
	Cgroup Cgroup

	// OnExit, if not nil, is called with the child's Exit once it has been
	// reaped (after Done's channel has it), on the reaper's goroutine: it
	// must not block for long. It spares a caller a goroutine per child
	// waiting on Done (perf: memory with thousands of children).
	OnExit func(Exit)
}

// Cgroup is a cgroup a child can start in: FD is a v2 directory for
// CLONE_INTO_CGROUP (-1 if none); otherwise (v1) Enter moves the calling,
// locked thread in from wherever it is and settle, called after the fork,
// puts the group's own limits in place; Home moves the thread back to
// podvisor's own cgroups. Homes names the controllers a thread in the
// group is in: a thread may enter a group with the same Homes straight
// from this one. On an error Enter has moved the thread home. Stay is
// whether the thread may stay in the group after the fork, until the next
// fork moves it on (spawnThread.enter).
type Cgroup interface {
	FD() int
	Enter() (settle func(), err error)
	Home()
	Homes() string
	Stay() bool
}

// Cred is a user to run a child as.
type Cred struct {
	UID, GID uint32
	Groups   []uint32 // supplementary groups; empty clears them
}

// Child is a spawned process leading its own process group.
type Child struct {
	r    *Reaper
	pid  int
	e    *entry
	done <-chan Exit
}

// Pid returns the child's pid.
func (c *Child) Pid() int { return c.pid }

// Pgid returns the child's process group id, which equals its pid.
func (c *Child) Pgid() int { return c.pid }

// Done receives exactly one Exit when the child has been reaped. Only one
// goroutine should receive from it.
func (c *Child) Done() <-chan Exit { return c.done }

// Signal sends sig to the child's process group. While the leader is unreaped
// the group id cannot have been reused; after that, Signal sends only if the
// group still has members and returns os.ErrProcessDone otherwise (see the
// package documentation for the residual race). A leader that moved itself to
// another group, leaving its own empty, is signalled directly.
func (c *Child) Signal(sig syscall.Signal) error {
	c.r.mu.RLock()
	defer c.r.mu.RUnlock()
	if c.r.registered(c.pid, c.e) {
		err := unix.Kill(-c.pid, sig)
		if errors.Is(err, unix.ESRCH) {
			// The leader joined another group and left its own empty.
			err = unix.Kill(c.pid, sig)
		}
		return wrapKill(err)
	}
	if err := unix.Kill(-c.pid, 0); errors.Is(err, unix.ESRCH) {
		return os.ErrProcessDone
	}
	return wrapKill(unix.Kill(-c.pid, sig))
}

// Stop sends sig and then SIGCONT to the group, so that a stopped process
// (kill -STOP) acts on sig at once instead of waiting for the SIGKILL (B17).
func (c *Child) Stop(sig syscall.Signal) error {
	if err := c.Signal(sig); err != nil {
		return err
	}
	if sig == syscall.SIGKILL || sig == syscall.SIGCONT {
		return nil
	}
	if err := c.Signal(syscall.SIGCONT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// GroupAlive reports whether any member of the child's process group (the
// leader included, until it is reaped) still exists. Stop escalation should
// wait for this to turn false, not only for the leader's exit (B4).
func (c *Child) GroupAlive() bool {
	err := unix.Kill(-c.pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func wrapKill(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESRCH):
		return os.ErrProcessDone
	default:
		return fmt.Errorf("signal process group: %w", err)
	}
}

// Spawn starts s as a new process group leader through r. Failures to start
// are *SpawnError.
func Spawn(r *Reaper, s Spec) (*Child, error) {
	cmd, err := command(s, os.Geteuid())
	if err != nil {
		return nil, err
	}
	var enter Cgroup
	if s.Cgroup != nil {
		if fd := s.Cgroup.FD(); fd >= 0 {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		} else {
			enter = s.Cgroup
		}
	}
	var raise []Rlimit
	if aboveOwn(s.Rlimits) {
		raise = s.Rlimits
	}
	pid, e, err := r.startCmd(cmd, s.OOMScoreAdj, raise, s.OnExit, enter)
	if err != nil {
		return nil, classify(view{s.Root}, s.Argv[0], cmd.Path, err)
	}
	return &Child{r: r, pid: pid, e: e, done: e.exit}, nil
}

// request turns cmd into a spawnReq, on the caller's thread. os/exec's own
// Start would also open /dev/null for stdin, make a pidfd and deduplicate
// the environment on every start; podvisor needs none of that (its
// environments are merged already and it reaps by pid), and every fd it
// holds costs every later spawn (see fdTables).
func (p *Spawners) request(cmd *exec.Cmd) (spawnReq, error) {
	if p.fdt.null < 0 {
		return spawnReq{}, p.nullErr
	}
	null := uintptr(p.fdt.null)
	fd := func(f any) uintptr {
		if f, ok := f.(*os.File); ok && f != nil {
			return f.Fd()
		}
		return null
	}
	files := make([]uintptr, 0, 3+len(cmd.ExtraFiles))
	files = append(files, fd(cmd.Stdin), fd(cmd.Stdout), fd(cmd.Stderr))
	for _, f := range cmd.ExtraFiles {
		files = append(files, f.Fd()) // nil: ^0, closed in the child
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	return spawnReq{path: cmd.Path, argv: cmd.Args, env: env, dir: cmd.Dir, sys: cmd.SysProcAttr, files: files}, nil
}

// command builds the exec.Cmd for s, checking up front what can be checked so
// the error can say precisely what is wrong (the fork child reports only an
// errno, without saying whether chdir, setuid or execve failed).
func command(s Spec, euid int) (*exec.Cmd, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, &SpawnError{Argv0: "", Reason: "empty command", Err: unix.EINVAL}
	}
	argv0 := s.Argv[0]
	v := view{s.Root}
	if s.Root != "" {
		if err := checkRoot(s.Root, euid); err != nil {
			return nil, &SpawnError{Argv0: argv0, Reason: err.Error(), Err: unix.EPERM}
		}
		if s.Dir != "" && !filepath.IsAbs(s.Dir) {
			return nil, &SpawnError{Argv0: argv0, Reason: fmt.Sprintf("working directory %q must be absolute inside root %q", s.Dir, s.Root), Err: unix.EINVAL}
		}
		if s.Dir == "" {
			// chroot leaves the working directory where it was, outside
			// the root: the child must never start there.
			s.Dir = "/"
		}
	}
	if s.Dir != "" {
		fi, err := v.stat(s.Dir)
		if err != nil {
			return nil, &SpawnError{Argv0: argv0, Reason: fmt.Sprintf("working directory %q: %s", s.Dir, errText(err)), Err: err}
		}
		if !fi.IsDir() {
			return nil, &SpawnError{Argv0: argv0, Reason: fmt.Sprintf("working directory %q is not a directory", s.Dir), Err: unix.ENOTDIR}
		}
	}
	path, err := resolve(v, argv0, s.Dir, pathOf(s.Env))
	if err != nil {
		return nil, err
	}
	if err := checkPrivileges(s); err != nil {
		return nil, &SpawnError{Argv0: argv0, Reason: err.Error(), Err: unix.EPERM}
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: s.DeathSignal, AmbientCaps: s.AmbientCaps}
	if s.Terminal {
		if s.Stdin == nil {
			return nil, &SpawnError{Argv0: argv0, Reason: "a terminal needs Stdin set to its slave", Err: unix.EINVAL}
		}
		// setpgid would fail (EPERM) on the session leader setsid made:
		// setsid alone makes the child its group's leader too.
		attr.Setpgid, attr.Setsid, attr.Setctty, attr.Ctty = false, true, true, 0
	}
	if s.Cred != nil {
		cred, err := credential(*s.Cred, euid)
		if err != nil {
			return nil, &SpawnError{Argv0: argv0, Reason: err.Error(), Err: unix.EPERM}
		}
		attr.Credential = cred
		if cred != nil && s.Dir != "" && s.Root == "" {
			// Stat above ran as podvisor (root): the fork child's chdir as
			// the user would fail with a bare EACCES, which execve's
			// error would then misname (docs/reliability.md, H12).
			if err := searchableBy(s.Dir, *s.Cred); err != nil {
				return nil, &SpawnError{Argv0: argv0, Reason: fmt.Sprintf("working directory %q: %s", s.Dir, err), Err: unix.EACCES}
			}
		}
	}
	if s.Root != "" {
		attr.Chroot, attr.Unshareflags = s.Root, unix.CLONE_NEWNS
	}
	cmd := &exec.Cmd{Path: path, Args: s.Argv, Env: s.Env, Dir: s.Dir, SysProcAttr: attr}
	// Assign only non-nil files: a nil *os.File in the io.Writer would make
	// os/exec close fd 1 instead of using /dev/null.
	if s.Stdin != nil {
		cmd.Stdin = s.Stdin
	}
	if s.Stdout != nil {
		cmd.Stdout = s.Stdout
	}
	if s.Stderr != nil {
		cmd.Stderr = s.Stderr
	}
	if s.NotifyFile != nil {
		if s.NotifyFD < 3+len(s.ListenFiles) || s.NotifyFD > MaxNotifyFD {
			return nil, &SpawnError{Argv0: argv0, Reason: fmt.Sprintf("notify fd %d out of range %d..%d", s.NotifyFD, 3+len(s.ListenFiles), MaxNotifyFD), Err: unix.EBADF}
		}
		// ExtraFiles[i] becomes fd 3+i; nil entries are closed in the child.
		cmd.ExtraFiles = make([]*os.File, s.NotifyFD-2)
		cmd.ExtraFiles[s.NotifyFD-3] = s.NotifyFile
	}
	if len(s.ListenFiles) > 0 {
		if len(cmd.ExtraFiles) < len(s.ListenFiles) {
			cmd.ExtraFiles = make([]*os.File, len(s.ListenFiles))
		}
		copy(cmd.ExtraFiles, s.ListenFiles)
	}
	if pidEnv := pidEnvOf(s); len(pidEnv) > 0 || shimmed(s) {
		cmd.Path, cmd.Args = withPidShim(append(pidEnv, shimOptions(s)...), cmd.Path, cmd.Args)
	}
	return cmd, nil
}

// pidEnvOf is what the shim sets to the child's pid: LISTEN_PID for
// sockets, and s.PidEnv.
func pidEnvOf(s Spec) []string {
	var names []string
	if len(s.ListenFiles) > 0 {
		names = append(names, "LISTEN_PID")
	}
	for _, n := range s.PidEnv {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// credential maps c to a syscall.Credential. Go then calls setgroups (clearing
// supplementary groups when Groups is empty), setgid and setuid in the child;
// the kernel drops all capabilities with the switch to a non-zero uid.
func credential(c Cred, euid int) (*syscall.Credential, error) {
	if euid != 0 {
		if int(c.UID) == euid && int(c.GID) == os.Getegid() && len(c.Groups) == 0 {
			return nil, nil // already that user; nothing to switch
		}
		return nil, fmt.Errorf("running as uid %d:%d requires podvisor to run as root (it runs as uid %d)", c.UID, c.GID, euid)
	}
	return &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}, nil
}

// pathOf returns the PATH the child will see: from its own environment when
// set there, else podvisor's.
func pathOf(env []string) string {
	if env == nil {
		return os.Getenv("PATH")
	}
	path := ""
	found := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, found = v, true // the last one wins, as in os/exec
		}
	}
	if !found {
		return os.Getenv("PATH")
	}
	return path
}

// resolve finds the executable for argv0 the way execvp would: a name with a
// slash is used as is (relative to dir), anything else is searched in path.
func resolve(v view, argv0, dir, path string) (string, error) {
	if strings.Contains(argv0, "/") {
		p := argv0
		if !filepath.IsAbs(p) {
			base := dir
			if base == "" {
				wd, err := os.Getwd()
				if err != nil {
					return "", &SpawnError{Argv0: argv0, Reason: "cannot determine working directory: " + errText(err), Err: err}
				}
				base = wd
			}
			p = filepath.Join(base, p)
		}
		if err := checkExecutable(v, p); err != nil {
			return "", &SpawnError{Argv0: argv0, Reason: reasonFor(v, p, err), Err: err}
		}
		return p, nil
	}
	var denied error
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) && dir != "" {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, argv0)
		err := checkExecutable(v, p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && denied == nil {
			denied = err // like execvp, report EACCES only if nothing better turns up
		}
	}
	if denied != nil {
		return "", &SpawnError{Argv0: argv0, Reason: "found in PATH but " + errText(denied), Err: denied}
	}
	// The PATH itself stays out of the message: it comes from the
	// environment, which may hold secrets, and reasons reach /status.
	n, dirs := len(filepath.SplitList(path)), "directories"
	if n == 1 {
		dirs = "directory"
	}
	return "", &SpawnError{Argv0: argv0, Reason: fmt.Sprintf("not found in PATH (%d %s searched)", n, dirs), Err: unix.ENOENT}
}

// checkExecutable returns ENOENT, EISDIR or EACCES as an execve would for
// the obvious cases; anything subtler is left to execve itself.
func checkExecutable(v view, p string) error {
	fi, err := v.stat(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	if fi.IsDir() {
		return unix.EISDIR
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return unix.EACCES
	}
	return nil
}

// classify turns a failed cmd.Start into a SpawnError.
func classify(v view, argv0, path string, err error) error {
	var se *SpawnError
	if errors.As(err, &se) {
		if se.Argv0 == "" {
			se.Argv0 = argv0
		}
		return se
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &SpawnError{Argv0: argv0, Reason: errText(err), Err: err}
	}
	return &SpawnError{Argv0: argv0, Reason: reasonFor(v, path, errno), Err: errno}
}

// reasonFor explains an exec failure of the file at path.
func reasonFor(v view, path string, err error) string {
	switch {
	case errors.Is(err, unix.ENOENT):
		if interp, script := interpreter(v, path); interp != "" {
			if script {
				return fmt.Sprintf("not found: interpreter %q named on the script's #! line does not exist", interp)
			}
			return fmt.Sprintf("not found: the binary's program interpreter (dynamic loader) %q does not exist; built for another system?", interp)
		}
		if _, serr := v.stat(path); serr == nil {
			return "not found: the file exists but its interpreter or loader does not"
		}
		return "not found: no such file"
	case errors.Is(err, unix.EISDIR):
		return "is a directory, not an executable"
	case errors.Is(err, unix.EACCES):
		return "permission denied (not executable, or on a noexec mount, or a directory on its path is not searchable)"
	case errors.Is(err, unix.ENOEXEC):
		return "exec format error: neither a #! script nor a binary for this machine"
	case errors.Is(err, unix.ETXTBSY):
		return "text file busy: the executable is open for writing"
	case errors.Is(err, unix.EAGAIN):
		return "resource temporarily unavailable (process limit reached?)"
	default:
		return errText(err)
	}
}

// interpreter returns the interpreter a script's #! line or an ELF binary's
// PT_INTERP names, with script true for the former. It returns "" when there
// is none or the file cannot be read.
func interpreter(v view, path string) (name string, script bool) {
	f, err := v.open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	if line, ok := strings.CutPrefix(string(head), "#!"); ok {
		line, _, _ = strings.Cut(line, "\n")
		if fields := strings.Fields(line); len(fields) > 0 {
			return fields[0], true
		}
		return "", false
	}
	return elfInterpreter(f), false
}

func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// SpawnError is a failure to start a process at all: retrying cannot help
// unless Retryable says so. Err is the underlying cause (usually a
// syscall.Errno) for errors.Is.
type SpawnError struct {
	Argv0  string
	Reason string // human explanation: not found / permission denied / exec format error / ...
	Err    error
}

func (e *SpawnError) Error() string { return fmt.Sprintf("exec %q: %s", e.Argv0, e.Reason) }

func (e *SpawnError) Unwrap() error { return e.Err }

// Code is the shell's exit code for the failure, as tini and sh report it:
// 127 for not found, 126 for found but not executable. Informational: podvisor
// itself exits 1 on spawn errors.
func (e *SpawnError) Code() int {
	if errors.Is(e.Err, unix.ENOENT) {
		return 127
	}
	return 126
}

// Retryable reports whether the failure is about resources (process or fd
// limits, memory, a busy executable) rather than the command itself, so that
// a later attempt may succeed.
func (e *SpawnError) Retryable() bool {
	for _, errno := range []syscall.Errno{unix.EAGAIN, unix.ENOMEM, unix.EMFILE, unix.ENFILE, unix.ETXTBSY} {
		if errors.Is(e.Err, errno) {
			return true
		}
	}
	return false
}
