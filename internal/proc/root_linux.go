package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// A child with Spec.Root runs in a mount namespace of its own (a copy of
// podvisor's, made private) with its root directory changed to Root, all in
// the fork child before credentials and chdir (Go's SysProcAttr Unshareflags
// and Chroot), so it stays podvisor's child: reaped, signalled and placed in
// its cgroup as any other. Whoever prepares Root mounts /proc, /dev and the
// rest in it (internal/kube builds a container's root). The checks made
// before the fork (working directory, the executable, its interpreter)
// resolve paths inside Root as the child will: openat2 with RESOLVE_IN_ROOT,
// so an absolute symlink in Root stays in Root.

// view resolves a child's paths: on this machine, or inside a root.
type view struct{ root string }

// open returns an O_PATH descriptor of p as the child would reach it.
func (v view) openPath(p string, flags uint64) (*os.File, error) {
	if v.root == "" {
		fd, err := unix.Open(p, int(flags)|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		return os.NewFile(uintptr(fd), p), nil
	}
	rfd, err := unix.Open(v.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: v.root, Err: err}
	}
	defer unix.Close(rfd)
	fd, err := unix.Openat2(rfd, p, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// stat is os.Stat of p as the child sees it.
func (v view) stat(p string) (fs.FileInfo, error) {
	if v.root == "" {
		return os.Stat(p)
	}
	f, err := v.openPath(p, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// open opens p for reading as the child sees it.
func (v view) open(p string) (*os.File, error) {
	if v.root == "" {
		return os.Open(p)
	}
	return v.openPath(p, unix.O_RDONLY|unix.O_NONBLOCK)
}

// checkRoot refuses a root that cannot work: not absolute, not a
// directory, or podvisor not root (chroot and mounts need it).
func checkRoot(root string, euid int) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("root %q is not an absolute path", root)
	}
	if euid != 0 {
		return fmt.Errorf("root %q: running a process in a root of its own requires podvisor to run as root (it runs as uid %d)", root, euid)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("root %q: %s", root, errText(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("root %q is not a directory", root)
	}
	if _, err := os.Stat(filepath.Join(root, "proc", "self")); errors.Is(err, fs.ErrNotExist) {
		// The exec shim (listen_linux.go) re-enters podvisor through
		// /proc/self/exe, and the programs in it expect a /proc.
		return fmt.Errorf("root %q has no /proc mounted", root)
	}
	return nil
}
