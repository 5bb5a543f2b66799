package control

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Off is the config value and flag value that disables the control socket.
const Off = "off"

// DefaultPath is where the control socket lives when the config does not
// say: /run/podvisor/control.sock for root, else
// $XDG_RUNTIME_DIR/podvisor/control.sock, else a per-user directory under
// /tmp (or $TMPDIR). The CLI computes the same path to find it.
func DefaultPath(euid int, getenv func(string) string) string {
	if euid == 0 {
		return "/run/podvisor/control.sock"
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "podvisor", "control.sock")
	}
	tmp := getenv("TMPDIR")
	if tmp == "" || !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "podvisor-"+strconv.Itoa(euid), "control.sock")
}

// prepareDir creates the socket's directory (0700) if it is missing. A
// directory that already exists is used as it is, except that one podvisor
// created for itself in a shared place must still be private: a directory
// in a world-writable parent (such as /tmp) must be ours and not writable by
// anyone else, or another user could have planted it to swap our socket.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the control socket's directory: %w", err)
	}
	parent, err := os.Stat(filepath.Dir(dir))
	if err != nil || parent.Mode().Perm()&0o002 == 0 {
		return nil // not in a world-writable parent: its owner decides
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("control socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("control socket directory %s is not a directory (a symlink?)", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("control socket directory %s belongs to uid %d, not to podvisor's uid %d; remove it or set control: in the config", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("control socket directory %s is writable by others (mode %o); chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// ErrInUse is returned (wrapped) by Listen when another podvisor answers on
// the socket.
var ErrInUse = errors.New("control socket in use")
