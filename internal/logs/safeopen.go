package logs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Log files live in directories that the process whose output they hold
// may be able to write (an operator chowns the directory to the process's
// user). podvisor, often root, must then write nothing but that file: a
// name in such a directory may be a symlink or a hard link to any file, a
// FIFO whose open blocks, or a device. So every file podvisor opens or
// creates there is opened relative to a descriptor of the directory,
// opened once (the last element without following a symlink), with
// O_NOFOLLOW and O_NONBLOCK, and used only if it is a regular file with
// one link; new and temporary files are created with O_EXCL, temporaries
// under random names; renames and removals are relative to the same
// descriptor. Symlinks in the directory's own parents are followed: they
// are the operator's.

// errRefused marks a log file podvisor will not write (reason
// file_refused).
var errRefused = errors.New("refused")

// openDir opens dir, creating it and its parents (0750) if missing; dir
// itself must be a directory, not a symlink to one.
func openDir(dir string) (int, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return -1, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return -1, fmt.Errorf("log directory %s: %w: a symbolic link, not a directory; give the log path with the real directory", dir, errRefused)
	case err != nil:
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// openAt opens name in the directory dfd (path is its full path, for
// errors) with flags (O_WRONLY or O_RDONLY, O_APPEND, O_CREAT, O_EXCL...),
// never following a symlink and never blocking, and returns it only if it
// is a regular file with a single link: a log file a process planted as a
// symlink, hard link, FIFO or device is refused.
func openAt(dfd int, name, path string, flags int, perm uint32) (*os.File, error) {
	fd, err := unix.Openat(dfd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("log file %s: %w: a symbolic link, not a regular file; remove it and podvisor creates the file", path, errRefused)
	case errors.Is(err, unix.ENXIO): // a FIFO without a reader, or a socket
		return nil, notRegular(path)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		unix.Close(fd)
		return nil, notRegular(path)
	case st.Nlink > 1:
		unix.Close(fd)
		return nil, fmt.Errorf("log file %s: %w: it has %d hard links (another may be any file); remove it and podvisor creates the file", path, errRefused, st.Nlink)
	}
	// Back to blocking: a regular file does not care, but what podvisor
	// hands on should be what it expects.
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	if err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenLogForRead opens the log file at path for reading as openAt does (no
// symlink, FIFO or device: `podvisor logs NAME` must not read, or hang on,
// what a process planted at its log path).
func OpenLogForRead(path string) (*os.File, error) {
	dfd, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("log directory %s: %w: a symbolic link, not a directory", filepath.Dir(path), errRefused)
		}
		return nil, &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(dfd)
	return openAt(dfd, filepath.Base(path), path, unix.O_RDONLY, 0)
}

func notRegular(path string) error {
	return fmt.Errorf("log file %s: %w: not a regular file (a FIFO, socket or device); remove it and podvisor creates the file", path, errRefused)
}

// existsAt reports whether name exists in dfd (a symlink counts).
func existsAt(dfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}
