package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// This file acts: it builds the roots RootPlan describes, in kube play's
// private mount namespace (nothing here propagates to the host: Bind made
// every mount private first). Planning is in imageplan.go.

// Roots are the roots BuildRoots mounted, for Close.
type Roots struct {
	Dirs []string // the roots mounted, in order
	// Modes says, per container, how its root is writable: "overlay" (an
	// overlayfs whose upper layer lies in the run's directory) or
	// "read-only" (a read-only bind of the image with tmpfs at /tmp,
	// /var/tmp and /run), as kube play reports it.
	Modes map[string]string
	// Why says, per read-only root, why the overlay was refused.
	Why map[string]string
	// Missing says, per container, which of the pod's files (RootPlan.
	// Files) its root could not take: a read-only image without the file.
	Missing map[string][]string
}

// BuildRoots mounts each plan's root: the image's file system (never
// written: an overlay's upper layer takes the container's writes, else it
// is bound read-only), a fresh /proc, a minimal /dev, /sys read-only, and
// the container's volumes at their paths. Every path inside the root is
// resolved with openat2(RESOLVE_IN_ROOT): a symlink in the image (to /etc,
// say) resolves inside the root, never to this machine's files.
func BuildRoots(plans []*RootPlan) (*Roots, error) {
	rs := &Roots{Modes: map[string]string{}, Why: map[string]string{}, Missing: map[string][]string{}}
	for _, p := range plans {
		if err := rs.build(p); err != nil {
			return rs, fmt.Errorf("%s: %w", p, err)
		}
	}
	return rs, nil
}

// Close unmounts the roots (each with everything mounted beneath it) and
// removes their writable layers; what it could not undo it reports, and
// then the run's directory must not be removed (it may still hold mounts).
func (rs *Roots) Close() []error {
	var errs []error
	for i := len(rs.Dirs) - 1; i >= 0; i-- {
		if err := unix.Unmount(rs.Dirs[i], unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount the root %s: %w", rs.Dirs[i], err))
		}
	}
	return errs
}

func (rs *Roots) build(p *RootPlan) error {
	lower := p.Image.Dir
	if !filepath.IsAbs(lower) || strings.ContainsAny(lower, ",:\\") {
		return fmt.Errorf("image directory %q: must be an absolute path without ',', ':' or '\\' (overlayfs options)", lower)
	}
	if fi, err := os.Stat(lower); err != nil || !fi.IsDir() {
		return fmt.Errorf("image directory %s: not a directory (%v)", lower, err)
	}
	layer := filepath.Join(filepath.Dir(p.Dir), "."+p.Container)
	for _, d := range []string{p.Dir, layer, filepath.Join(layer, "upper"), filepath.Join(layer, "work")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	// The root's own mode is the image's (a root 0700 would lock out a
	// container's non-root user).
	if fi, err := os.Stat(lower); err == nil {
		_ = os.Chmod(filepath.Join(layer, "upper"), fi.Mode().Perm())
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s/upper,workdir=%s/work", lower, layer, layer)
	mode := "overlay"
	if oerr := unix.Mount("overlay", p.Dir, "overlay", 0, opts); oerr != nil {
		// No overlayfs here (or not on this file system, or the image
		// is already two file systems deep, the kernel's stacking
		// limit): the image read-only, with memory for the usual
		// writable places.
		rs.Why[p.Container] = oerr.Error()
		if err := unix.Mount(lower, p.Dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind the image %s: %w", lower, err)
		}
		rs.Dirs = append(rs.Dirs, p.Dir)
		if err := unix.Mount("", p.Dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("make the image read-only: %w", err)
		}
		mode = "read-only"
	} else {
		rs.Dirs = append(rs.Dirs, p.Dir)
	}
	rs.Modes[p.Container] = mode
	root, err := openDir(p.Dir)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	if err := systemMounts(root, mode == "read-only"); err != nil {
		return err
	}
	for _, m := range p.Mounts {
		if err := bindInRoot(root, m); err != nil {
			return fmt.Errorf("volume %s at %s: %w", m.Volume, m.Target, err)
		}
	}
	for _, f := range p.Files {
		err := bindInRoot(root, f)
		if errors.Is(err, errReadOnlyRoot) {
			// The image's own file, or none, stays: a read-only image
			// cannot take a mount point it lacks.
			rs.Missing[p.Container] = append(rs.Missing[p.Container], f.Target)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.Volume, err)
		}
	}
	return nil
}

// errReadOnlyRoot: a mount point is missing in a read-only root.
var errReadOnlyRoot = errors.New("the image has none, and its root is read-only (no overlayfs here)")

// inRoot opens p (absolute, a path inside the root) beneath root with
// RESOLVE_IN_ROOT, never following a magic link (/proc/self/root and its
// kind lead out).
func inRoot(root int, p string, flags uint64) (int, error) {
	fd, err := unix.Openat2(root, p, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return fd, nil
}

// mountPointIn opens p inside the root, creating it and its missing
// parents (directories; the last one an empty file if !dir), each created
// beneath its parent resolved inside the root.
func mountPointIn(root int, p string, dir bool) (int, error) {
	p = filepath.Clean("/" + p)
	fd, err := inRoot(root, p, unix.O_PATH)
	if err == nil || !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	parent, name := filepath.Split(p)
	pfd, err := mountPointIn(root, parent, true)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	if dir {
		err = unix.Mkdirat(pfd, name, 0o755)
	} else {
		var f int
		if f, err = unix.Openat(pfd, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644); err == nil {
			unix.Close(f)
		}
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		if errors.Is(err, unix.EROFS) {
			return -1, fmt.Errorf("create %s: %w", p, errReadOnlyRoot)
		}
		return -1, &os.PathError{Op: "create", Path: p, Err: err}
	}
	return inRoot(root, p, unix.O_PATH)
}

// mountIn mounts at p inside the root.
func mountIn(root int, p, source, fstype string, flags uintptr, data string) error {
	fd, err := mountPointIn(root, p, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Mount(source, fdPath(fd), fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s at %s: %w", fstype, p, err)
	}
	return nil
}

// devices are the nodes of a container's /dev, as a runtime gives them.
var devices = []struct {
	name         string
	major, minor uint32
}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}}

// systemMounts mounts /proc, /dev (null, zero, full, random, urandom,
// tty, pts, shm), /sys read-only and, for a read-only root, tmpfs at /tmp,
// /var/tmp and /run.
func systemMounts(root int, readOnly bool) error {
	const safe = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := mountIn(root, "/proc", "proc", "proc", safe, ""); err != nil {
		return err
	}
	if err := mountIn(root, "/dev", "tmpfs", "tmpfs", unix.MS_NOSUID|unix.MS_STRICTATIME, "mode=755,size=65536k"); err != nil {
		return err
	}
	dev, err := inRoot(root, "/dev", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dev)
	for _, d := range devices {
		if err := unix.Mknodat(dev, d.name, unix.S_IFCHR|0o666, int(unix.Mkdev(d.major, d.minor))); err != nil {
			return fmt.Errorf("/dev/%s: %w", d.name, err)
		}
		// mknod's mode passes through the umask.
		if err := unix.Fchmodat(dev, d.name, 0o666, 0); err != nil {
			return fmt.Errorf("/dev/%s: %w", d.name, err)
		}
	}
	for _, l := range [][2]string{{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}} {
		if err := unix.Symlinkat(l[1], dev, l[0]); err != nil {
			return fmt.Errorf("/dev/%s: %w", l[0], err)
		}
	}
	if err := mountIn(root, "/dev/pts", "devpts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	if err := mountIn(root, "/dev/shm", "shm", "tmpfs", safe, "mode=1777,size=65536k"); err != nil {
		return err
	}
	if err := mountIn(root, "/sys", "sysfs", "sysfs", safe|unix.MS_RDONLY, ""); err != nil {
		return err
	}
	if readOnly {
		for _, d := range []string{"/tmp", "/var/tmp", "/run"} {
			fd, err := inRoot(root, d, unix.O_PATH|unix.O_DIRECTORY)
			if err != nil {
				continue // the image has none: nothing to make writable
			}
			err = unix.Mount("tmpfs", fdPath(fd), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777")
			unix.Close(fd)
			if err != nil {
				return fmt.Errorf("tmpfs at %s: %w", d, err)
			}
		}
	}
	return nil
}

// bindInRoot binds the volume of m at its target inside the root; the
// source (a subPath opened without following symlinks, as Bind does) is
// the volume's, the target resolved inside the root.
func bindInRoot(root int, m Mount) error {
	src, done, err := openSource(m)
	if err != nil {
		return err
	}
	defer done()
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	tfd, err := mountPointIn(root, m.Target, fi.IsDir())
	if err != nil {
		return err
	}
	err = unix.Mount(src, fdPath(tfd), "", unix.MS_BIND|unix.MS_REC, "")
	unix.Close(tfd)
	if err != nil {
		return fmt.Errorf("bind %s: %w", m.sourcePath(), err)
	}
	if !m.ReadOnly {
		return nil
	}
	// The target again: now the volume's root.
	vfd, err := inRoot(root, m.Target, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(vfd)
	if err := unix.Mount("", fdPath(vfd), "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("read-only: %w", err)
	}
	return nil
}
