package kube

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Walks beneath a directory that never follow a symlink: what kube play
// creates or binds inside a volume stays inside it even if something (a
// hostPath's content, an earlier container) planted a symlink there. This is
// the kubelet's answer for subPath too (a no-follow openat walk, then a bind
// of /proc/self/fd/N).

// errSymlink is returned when a walk meets a symlink.
var errSymlink = errors.New("is a symbolic link (not followed: it could lead out of the volume)")

// openDir opens dir itself (following symlinks: dir is podvisor's own
// volume directory or a hostPath the manifest names as such) as an O_PATH
// descriptor.
func openDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// walkBeneath opens rel (relative, no "..": checked by the planner, and
// again here) beneath the directory dirfd, one element at a time with
// O_NOFOLLOW, creating missing directories (mode 0755) when create is set.
// It returns an O_PATH descriptor of the last element, which the caller
// closes.
func walkBeneath(dirfd int, base, rel string, create bool) (int, error) {
	fd, err := unix.Dup(dirfd)
	if err != nil {
		return -1, err
	}
	at := base
	for _, el := range strings.Split(rel, "/") {
		if el == "" || el == "." {
			continue
		}
		if el == ".." {
			unix.Close(fd)
			return -1, fmt.Errorf("%s: '..' leads out of %s", rel, base)
		}
		at += "/" + el
		next, err := unix.Openat(fd, el, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, el, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, el, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: at, Err: err}
		}
		fd = next
		if _, err := statNoLink(fd, at); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// statNoLink stats the O_PATH descriptor fd of at and refuses a symlink
// (an O_PATH|O_NOFOLLOW open of a link gives the link itself).
func statNoLink(fd int, at string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, &os.PathError{Op: "stat", Path: at, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return st, &os.PathError{Op: "open", Path: at, Err: errSymlink}
	}
	return st, nil
}

// writeBeneath writes data to the file rel beneath dir with mode, creating
// its parent directories; no element of rel may be a symlink, the file
// included.
func writeBeneath(dir, rel string, data []byte, mode os.FileMode) error {
	root, err := openDir(dir)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	parent, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		parent, name = rel[:i], rel[i+1:]
	}
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("%s/%s: not a file name", dir, rel)
	}
	pfd, err := walkBeneath(root, dir, parent, true)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	// O_PATH descriptors cannot be used with openat's O_CREAT directly in
	// every kernel's eyes; reopen the parent as a real directory.
	dfd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir + "/" + parent, Err: err}
	}
	defer unix.Close(dfd)
	p := dir + "/" + rel
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if errors.Is(err, unix.ELOOP) {
		return &os.PathError{Op: "write", Path: p, Err: errSymlink}
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	if err := f.Chmod(mode.Perm()); err != nil { // the umask masked O_CREAT's mode
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

// mkdirBeneath creates the directory name (one element) in dir with mode
// exactly, or sets mode on it if it already is a directory; a symlink there
// is refused.
func mkdirBeneath(dir, name string, mode os.FileMode) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return fmt.Errorf("%s: volume directory name %q is not one path element", dir, name)
	}
	root, err := openDir(dir)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	if err := unix.Mkdirat(root, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: dir + "/" + name, Err: err}
	}
	fd, err := unix.Openat(root, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return &os.PathError{Op: "mkdir", Path: dir + "/" + name, Err: errors.New("exists and is not a directory (a symlink is not followed)")}
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: dir + "/" + name, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, uint32(mode.Perm())); err != nil {
		return &os.PathError{Op: "chmod", Path: dir + "/" + name, Err: err}
	}
	return nil
}
