package launch

// Daemons with a pid file (`daemon: {pid_file: PATH}`, docs/reference.md):
// the command forks a daemon, which writes its pid to the file, and exits.
// Once it has exited with a success code, the pid is read and adopted as
// the main process (mainpid.go), with the same checks as MAINPID=.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/supervisor"
)

const (
	// maxPidFile bounds what is read of a pid file: a pid and a newline
	// need a few bytes; anything longer is not a pid file.
	maxPidFile = 64
	// pidFilePoll and pidFileWait: how often and how long a pid file that
	// is not there (or not whole) yet is looked for when start_timeout
	// does not say how long (systemd waits for it too).
	pidFilePoll = 50 * time.Millisecond
	pidFileWait = 10 * time.Second
)

// readPidFile reads the pid in path: a regular file, not reached through a
// symlink in its last element, of at most maxPidFile bytes, holding one
// decimal pid above 1 with whitespace around it at most.
func readPidFile(path string) (int, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return 0, fmt.Errorf("pid file %s is a symlink", path)
		}
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("pid file %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPidFile+1))
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	if len(b) > maxPidFile {
		return 0, fmt.Errorf("pid file %s is longer than %d bytes", path, maxPidFile)
	}
	pid, ok := parsePid(b)
	if !ok {
		return 0, fmt.Errorf("pid file %s holds %q, not a pid", path, clip(string(bytes.TrimSpace(b)), 20))
	}
	return pid, nil
}

// parsePid reads a pid file's content: one decimal pid above 1 (init) and
// at most the kernel's largest (2^22), with whitespace around it at most.
func parsePid(b []byte) (int, bool) {
	s := bytes.TrimSpace(b)
	if len(s) == 0 || len(s) > 7 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	pid, err := strconv.Atoi(string(s))
	return pid, err == nil && pid > 1 && pid <= 1<<22
}

// awaitDaemon runs once the command of p (the leader of mp) exited with a
// success code: it reads the pid file, retrying while it is missing or
// empty, and adopts the pid. If that fails it tells the supervisor why
// and passes the command's exit on: a failed start.
func awaitDaemon(p *config.Process, mp *mainProc, h supervisor.Hooks, ex proc.Exit) {
	wait := pidFileWait
	if p.StartTimeout > 0 {
		wait = p.StartTimeout
	}
	deadline := time.Now().Add(wait)
	for {
		pid, err := readPidFile(p.Daemon.PidFile)
		if err == nil {
			if err = mp.adopt(pid, true); err == nil {
				if h.MainPID != nil {
					h.MainPID(pid)
				}
				return
			}
			err = fmt.Errorf("pid %d from %s refused: %w", pid, p.Daemon.PidFile, err)
		}
		if time.Now().After(deadline) || !retryPidFile(err) {
			if h.Failed != nil {
				h.Failed("daemon: " + err.Error())
			}
			mp.exited(ex)
			return
		}
		time.Sleep(pidFilePoll)
	}
}

// retryPidFile reports whether err may go away: the file is not there
// yet, or not written whole yet.
func retryPidFile(err error) bool {
	return errors.Is(err, os.ErrNotExist) || err != nil && bytes.Contains([]byte(err.Error()), []byte(`holds ""`))
}
