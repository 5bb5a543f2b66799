package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// This file acts: it creates volumes and binds them. Planning is in
// volumes.go.

// Materialise creates each planned volume: a fresh directory for emptyDir
// (mode 0777, as the kubelet makes it), the files of configMap and secret
// volumes, and the checks of a hostPath's type. A volume's directory is one
// element (its name) under the run's volume directory, and its files are
// written without following any symlink (beneath_linux.go).
func Materialise(vols []*VolumePlan) error {
	for _, v := range vols {
		switch v.Kind {
		case "emptyDir", "configMap", "secret", "downwardAPI", "projected":
			dir, name := filepath.Split(v.Source)
			if name != v.Name || !dnsLabel(name) {
				return fmt.Errorf("volume %q: its directory %s is not named after it", v.Name, v.Source)
			}
			// Normally made already, with its fence (MakeVolumeDir).
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("volume %s: %w", v.Name, err)
			}
			mode := os.FileMode(0o777)
			if v.Kind != "emptyDir" {
				mode = 0o755
			}
			if err := mkdirBeneath(dir, name, mode); err != nil {
				return fmt.Errorf("volume %s: %w", v.Name, err)
			}
			for _, rel := range sortedKeys(v.Files) {
				f := v.Files[rel]
				if prob := localPathProblem(rel, true); prob != "" {
					return fmt.Errorf("volume %s: file %q %s", v.Name, rel, prob)
				}
				if err := writeBeneath(v.Source, rel, []byte(f.Data), f.Mode); err != nil {
					return fmt.Errorf("volume %s: %w", v.Name, err)
				}
			}
		case "persistentVolumeClaim":
			if err := makeClaim(v.Source); err != nil {
				return fmt.Errorf("volume %s: claim %s: %w", v.Name, v.Claim, err)
			}
		case "hostPath":
			if err := hostPath(v); err != nil {
				return fmt.Errorf("volume %s: hostPath %s: %w", v.Name, v.Source, err)
			}
		}
	}
	return nil
}

func mkdirMode(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, mode) // MkdirAll's mode is masked by the umask
}

func hostPath(v *VolumePlan) error {
	fi, err := os.Stat(v.Source)
	exists := err == nil
	switch v.HostType {
	case "DirectoryOrCreate":
		if !exists {
			return mkdirMode(v.Source, 0o755)
		}
		if !fi.IsDir() {
			return errors.New("exists and is not a directory")
		}
	case "FileOrCreate":
		if !exists {
			f, err := os.OpenFile(v.Source, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
	case "Directory":
		if !exists || !fi.IsDir() {
			return errors.New("is not an existing directory (type Directory)")
		}
	case "File":
		if !exists || !fi.Mode().IsRegular() {
			return errors.New("is not an existing file (type File)")
		}
	case "Socket", "CharDevice", "BlockDevice":
		if !exists {
			return fmt.Errorf("does not exist (type %s)", v.HostType)
		}
	case "":
		if !exists {
			return errors.New("does not exist (set type: DirectoryOrCreate to create it)")
		}
	default:
		return fmt.Errorf("unknown hostPath type %q", v.HostType)
	}
	return nil
}

// Bound is what Bind did, for Unbind.
type Bound struct {
	Mounted []string // targets, in mount order
	// Created holds the mount points on the real filesystem Bind created,
	// or adopted from another run (see Record), parents first.
	Created []string
	record  *Record         // where Created is written down first, or nil
	others  map[string]bool // what the other runs' records list, read once
	// roots are the directories whose content is a volume's: the targets
	// bound (or linked) so far and the hostPaths' directories. A mount
	// point beneath one is created, and removed, without following
	// symlinks: a container may have planted one there.
	roots []volumeRoot
	// beneath maps a path of Created to the root it lies beneath.
	beneath map[string]string
}

// volumeRoot is a directory holding a volume's content.
type volumeRoot struct {
	path string
	// fd is an O_PATH descriptor of the bound volume, or -1: opened by
	// path when needed (the manifest's hostPath, or a link of --volume-root).
	fd int
}

// rootOf returns the deepest root that target lies strictly beneath.
func (b *Bound) rootOf(target string) (volumeRoot, bool) {
	var best volumeRoot
	found := false
	for _, r := range b.roots {
		if r.path != "/" && strings.HasPrefix(target, r.path+"/") && (!found || len(r.path) > len(best.path)) {
			best, found = r, true
		}
	}
	return best, found
}

// hostRoots adds the directories of the hostPath volumes to the roots.
func (b *Bound) hostRoots(mounts []Mount) {
	for _, m := range mounts {
		if m.HostPath {
			b.roots = append(b.roots, volumeRoot{path: filepath.Clean(m.Source), fd: -1})
		}
	}
}

// closeRoots closes the roots' descriptors.
func (b *Bound) closeRoots() {
	for i, r := range b.roots {
		if r.fd >= 0 {
			unix.Close(r.fd)
		}
		b.roots[i].fd = -1
	}
}

// rootFD returns the descriptor of the root at path, or -1.
func (b *Bound) rootFD(path string) int {
	for _, r := range b.roots {
		if r.path == path && r.fd >= 0 {
			return r.fd
		}
	}
	return -1
}

// Bind bind-mounts each volume at its target. It must run in a private
// mount namespace (see cmd/podvisor): it first makes every mount private,
// so that nothing it mounts propagates to the host. Missing mount points are
// created (recorded in Bound.Created, for Unbind to remove, and in rec,
// when not nil, before each is created: see Record). With rec, it holds
// the state directory's lock throughout, and adopts the existing mount
// points other runs' records list. A mount point inside another volume
// (beneath a target bound before it, or a hostPath's directory) is opened
// and created without following symlinks, and bound through
// /proc/self/fd/N, as runc does within a container's root.
func Bind(mounts []Mount, rec *Record) (*Bound, error) {
	b := &Bound{record: rec}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return b, fmt.Errorf("making mounts private: %w", err)
	}
	if rec != nil {
		unlock, err := lockState(rec.dir())
		if err != nil {
			return b, fmt.Errorf("mount points: %w", err)
		}
		defer unlock()
		// Read before any bind: a volume may come to cover the state
		// directory.
		if err := b.readOthers(); err != nil {
			return b, fmt.Errorf("mount points: %w", err)
		}
	}
	// The roots' descriptors stay open until Unbind: what Bind made inside
	// a volume is removed through them, even once the volume is unmounted.
	b.hostRoots(mounts)
	for _, m := range mounts {
		if err := b.bindOne(m); err != nil {
			return b, fmt.Errorf("volume %s: %w", m.Volume, err)
		}
	}
	return b, nil
}

// bindOne binds m at its target.
func (b *Bound) bindOne(m Mount) error {
	src, done, err := openSource(m)
	if err != nil {
		return err
	}
	defer done()
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	tfd, err := b.mountPoint(m.Target, fi.IsDir())
	if err != nil {
		return fmt.Errorf("mount point %s: %w", m.Target, err)
	}
	err = unix.Mount(src, fdPath(tfd), "", unix.MS_BIND|unix.MS_REC, "")
	unix.Close(tfd)
	if err != nil {
		return fmt.Errorf("bind %s at %s: %w", m.sourcePath(), m.Target, err)
	}
	b.Mounted = append(b.Mounted, m.Target)
	// The target again, now the volume's root: a descriptor taken before
	// the bind is the directory under it.
	vfd, err := b.open(m.Target, fi.IsDir(), false)
	if err != nil {
		return fmt.Errorf("bound at %s: %w", m.Target, err)
	}
	if m.ReadOnly {
		if err := unix.Mount("", fdPath(vfd), "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_REC, ""); err != nil {
			unix.Close(vfd)
			return fmt.Errorf("read-only %s: %w", m.Target, err)
		}
	}
	if !fi.IsDir() {
		unix.Close(vfd)
		return nil
	}
	b.roots = append(b.roots, volumeRoot{path: m.Target, fd: vfd})
	return nil
}

func fdPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// openSource returns the path to bind for m: the volume's directory, or for
// a subPath, /proc/self/fd/N of the subPath opened beneath the volume
// without following symlinks (created as a directory if missing, as the
// kubelet does), so that a symlink planted in the volume cannot make the
// bind expose anything outside it. done closes what it opened.
func openSource(m Mount) (string, func(), error) {
	if m.SubPath == "" {
		return m.Source, func() {}, nil
	}
	if prob := localPathProblem(m.SubPath, false); prob != "" {
		return "", nil, fmt.Errorf("subPath %q %s", m.SubPath, prob)
	}
	root, err := openDir(m.Source)
	if err != nil {
		return "", nil, err
	}
	defer unix.Close(root)
	fd, err := walkBeneath(root, m.Source, m.SubPath, true)
	if err != nil {
		return "", nil, fmt.Errorf("subPath %s: %w", m.SubPath, err)
	}
	return fdPath(fd), func() { unix.Close(fd) }, nil
}

// readOthers reads, once, what the other runs' records list (live or
// dead: a dead run's record is cleaned later, and would remove a mount
// point this run did not adopt). The caller holds the state lock.
func (b *Bound) readOthers() error {
	if b.others != nil || b.record == nil {
		return nil
	}
	var err error
	b.others, err = b.record.othersListed(false)
	return err
}

// mountPoint creates target (a directory, or an empty file for a file
// source) and its missing parents, recording what it created, and returns
// an O_PATH descriptor of it. Beneath a root (inside a volume), it walks
// from the root one element at a time without following symlinks and
// refuses one, naming it. Elsewhere the path is this machine's own and is
// resolved as such; the existing part of it that other runs' records list,
// it adopts: it records those paths too and counts them as its own, so that
// the run that created them does not remove them while this run uses them.
// The caller holds the state lock.
func (b *Bound) mountPoint(target string, dir bool) (int, error) {
	if err := b.readOthers(); err != nil {
		return -1, err
	}
	if _, ok := b.rootOf(target); ok {
		return b.open(target, dir, true)
	}
	var missing []string
	p := target
	for ; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return -1, err
		}
		missing = append(missing, p)
		if p == "/" {
			break
		}
	}
	// Above the first path not listed, every path holds it, so none can
	// be removed while it exists.
	var adopted []string
	for ; p != "/" && b.others[p] && !slices.Contains(b.Created, p); p = filepath.Dir(p) {
		adopted = append(adopted, p)
	}
	slices.Reverse(adopted)
	for _, p := range adopted {
		if err := b.record.add(recordEntry{Adopted: p}); err != nil {
			return -1, fmt.Errorf("record %s: %w", p, err)
		}
		b.Created = append(b.Created, p)
	}
	slices.Reverse(missing)
	for i, p := range missing {
		if err := b.record.add(recordEntry{Created: p}); err != nil {
			return -1, fmt.Errorf("record %s: %w", p, err)
		}
		var err error
		if i == len(missing)-1 && !dir {
			var f *os.File
			if f, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				err = f.Close()
			}
		} else {
			err = os.Mkdir(p, 0o755)
		}
		if err != nil {
			return -1, err
		}
		b.Created = append(b.Created, p)
	}
	return b.open(target, dir, false)
}

// open returns an O_PATH descriptor of target. Beneath a root it walks
// from the root without following symlinks, and with create makes what
// is missing (recorded first, as mountPoint does) and adopts what other
// runs' records list; elsewhere it opens the path.
func (b *Bound) open(target string, dir, create bool) (int, error) {
	root, ok := b.rootOf(target)
	if !ok {
		fd, err := unix.Open(target, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: target, Err: err}
		}
		return fd, nil
	}
	var fd int
	var err error
	if root.fd >= 0 {
		fd, err = unix.Dup(root.fd)
	} else {
		fd, err = openDir(root.path)
	}
	if err != nil {
		return -1, err
	}
	at := root.path
	els := strings.Split(target[len(root.path)+1:], "/")
	for i, el := range els {
		last := i == len(els)-1
		at += "/" + el
		next, err := unix.Openat(fd, el, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.ENOENT) && create:
			next, err = b.create(fd, el, at, last && !dir, root.path)
		case err == nil && create && b.others[at] && !slices.Contains(b.Created, at):
			if err = b.record.add(recordEntry{Adopted: at, Beneath: root.path}); err == nil {
				b.created(at, root.path)
			}
		}
		unix.Close(fd)
		if err != nil {
			if next >= 0 {
				unix.Close(next)
			}
			return -1, &os.PathError{Op: "open", Path: at, Err: err}
		}
		fd = next
		st, err := statNoLink(fd, at)
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		if !last && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(fd)
			return -1, &os.PathError{Op: "open", Path: at, Err: unix.ENOTDIR}
		}
	}
	return fd, nil
}

// create makes the element el of dirfd (at is its path, beneath root), a
// directory or an empty file, recorded first, and opens it.
func (b *Bound) create(dirfd int, el, at string, file bool, root string) (int, error) {
	if err := b.record.add(recordEntry{Created: at, Beneath: root}); err != nil {
		return -1, fmt.Errorf("record: %w", err)
	}
	if file {
		f, err := unix.Openat(dirfd, el, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return -1, err
		}
		unix.Close(f)
	} else if err := unix.Mkdirat(dirfd, el, 0o755); err != nil {
		return -1, err
	}
	b.created(at, root)
	return unix.Openat(dirfd, el, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// created notes p, created or adopted beneath root.
func (b *Bound) created(p, root string) {
	b.Created = append(b.Created, p)
	if b.beneath == nil {
		b.beneath = map[string]string{}
	}
	b.beneath[p] = root
}

// Unbind undoes Bind: unmounts in reverse order, then removes the mount
// points it created or adopted (only if still empty; inside a volume
// through the volume's descriptor, without following symlinks), but those
// another live run's record lists: the last run out removes them. With a
// record, it does so under the state lock and removes the record last.
func Unbind(b *Bound) []error {
	defer b.closeRoots()
	var errs []error
	for i := len(b.Mounted) - 1; i >= 0; i-- {
		if err := unix.Unmount(b.Mounted[i], unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", b.Mounted[i], err))
		}
	}
	var inUse map[string]bool
	if b.record != nil {
		unlock, err := lockState(b.record.dir())
		if err == nil {
			defer unlock()
			inUse, err = b.record.othersListed(true)
		}
		if err != nil {
			// Left to CleanStale, once this run is gone.
			return append(errs, fmt.Errorf("mount points %s left: %w", strings.Join(b.Created, ", "), err))
		}
	}
	for i := len(b.Created) - 1; i >= 0; i-- {
		p := b.Created[i]
		if inUse[p] {
			continue
		}
		var err error
		if root, ok := b.beneath[p]; ok {
			_, err = removeBeneath(b.rootFD(root), root, p, true)
		} else if err = os.Remove(p); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove mount point %s: %w", p, err))
		}
	}
	if len(errs) == 0 {
		if err := b.record.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// removeBeneath removes p, beneath the directory root (its descriptor
// rootfd, or -1: opened by path), reaching it from root without following
// symlinks: an empty directory, an empty regular file, or with links a
// symlink (--volume-root's own). Anything else, nothing there, or a
// symlink on the way, is left; it reports whether it removed p.
func removeBeneath(rootfd int, root, p string, links bool) (bool, error) {
	rel, ok := strings.CutPrefix(p, root+"/")
	if !ok || localPathProblem(rel, false) != "" {
		return false, fmt.Errorf("%s is not beneath %s", p, root)
	}
	var rfd int
	var err error
	if rootfd >= 0 {
		rfd, err = unix.Dup(rootfd)
	} else {
		rfd, err = openDir(root)
	}
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(rfd)
	parent, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		parent, name = rel[:i], rel[i+1:]
	}
	pfd, err := walkBeneath(rfd, root, parent, false)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, errSymlink) {
		return false, nil // not what was made there any more: left
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return false, nil
	} else if err != nil {
		return false, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	flags := 0
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		flags = unix.AT_REMOVEDIR // only if empty
	case unix.S_IFREG:
		if st.Size != 0 {
			return false, nil
		}
	case unix.S_IFLNK:
		if !links {
			return false, nil
		}
	default:
		return false, nil
	}
	if err := unix.Unlinkat(pfd, name, flags); err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.EBUSY) {
			return false, nil // in use again: leave it
		}
		return false, &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return true, nil
}

// Link stands in for Bind under --volume-root: a symlink at each target
// (under the root) pointing at the volume. No privilege needed. A target
// beneath another one (so inside that volume) or beneath a hostPath's
// directory is reached and made without following symlinks, as in Bind.
func Link(mounts []Mount) (*Bound, error) {
	b := &Bound{}
	b.hostRoots(mounts)
	for _, m := range mounts {
		vfd, err := b.linkOne(m)
		if err != nil {
			return b, fmt.Errorf("volume %s: %w", m.Volume, err)
		}
		if vfd >= 0 {
			// Kept until Unbind, as Bind keeps its volumes' descriptors.
			b.roots = append(b.roots, volumeRoot{path: m.Target, fd: vfd})
		}
	}
	return b, nil
}

// linkOne makes m's link and returns a descriptor of the volume directory
// it leads to, or -1 for a file.
func (b *Bound) linkOne(m Mount) (int, error) {
	parent := filepath.Dir(m.Target)
	pfd, err := b.mountPoint(parent, true)
	if err != nil {
		return -1, fmt.Errorf("mount point %s: %w", parent, err)
	}
	defer unix.Close(pfd)
	// A subPath is checked (and created) without following symlinks; the
	// link itself is a path, resolved when used.
	src, done, err := openSource(m)
	if err != nil {
		return -1, err
	}
	vfd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
	done()
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: m.sourcePath(), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(vfd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(vfd)
		vfd = -1
	}
	if err := unix.Symlinkat(m.sourcePath(), pfd, filepath.Base(m.Target)); err != nil {
		if vfd >= 0 {
			unix.Close(vfd)
		}
		return -1, fmt.Errorf("%w (the --volume-root must not hold it yet)", &os.PathError{Op: "symlink", Path: m.Target, Err: err})
	}
	if root, ok := b.rootOf(m.Target); ok {
		b.created(m.Target, root.path)
	} else {
		b.Created = append(b.Created, m.Target)
	}
	return vfd, nil
}

// sourcePath is the volume path m binds, subPath included, for messages and
// for the links of --volume-root.
func (m Mount) sourcePath() string {
	if m.SubPath == "" {
		return m.Source
	}
	return filepath.Join(m.Source, m.SubPath)
}
