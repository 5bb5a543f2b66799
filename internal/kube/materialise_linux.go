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
}

// Bind bind-mounts each volume at its target. It must run in a private
// mount namespace (see cmd/podvisor): it first makes every mount private,
// so that nothing it mounts propagates to the host. Missing mount points are
// created (recorded in Bound.Created, for Unbind to remove, and in rec,
// when not nil, before each is created: see Record). With rec, it holds
// the state directory's lock throughout, and adopts the existing mount
// points other runs' records list.
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
	for _, m := range mounts {
		src, done, err := openSource(m)
		if err != nil {
			return b, fmt.Errorf("volume %s: %w", m.Volume, err)
		}
		fi, err := os.Stat(src)
		if err != nil {
			done()
			return b, fmt.Errorf("volume %s: %w", m.Volume, err)
		}
		if err := b.mountPoint(m.Target, fi.IsDir()); err != nil {
			done()
			return b, fmt.Errorf("volume %s: mount point %s: %w", m.Volume, m.Target, err)
		}
		err = unix.Mount(src, m.Target, "", unix.MS_BIND|unix.MS_REC, "")
		done()
		if err != nil {
			return b, fmt.Errorf("volume %s: bind %s at %s: %w", m.Volume, m.sourcePath(), m.Target, err)
		}
		b.Mounted = append(b.Mounted, m.Target)
		if m.ReadOnly {
			if err := unix.Mount("", m.Target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_REC, ""); err != nil {
				return b, fmt.Errorf("volume %s: read-only %s: %w", m.Volume, m.Target, err)
			}
		}
	}
	return b, nil
}

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
	return fmt.Sprintf("/proc/self/fd/%d", fd), func() { unix.Close(fd) }, nil
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
// source) and its missing parents, recording what it created. The existing
// part of the path that other runs' records list, it adopts: it records
// those paths too and counts them as its own, so that the run that created
// them does not remove them while this run uses them. The caller holds the
// state lock.
func (b *Bound) mountPoint(target string, dir bool) error {
	if err := b.readOthers(); err != nil {
		return err
	}
	var missing []string
	p := target
	for ; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
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
			return fmt.Errorf("record %s: %w", p, err)
		}
		b.Created = append(b.Created, p)
	}
	slices.Reverse(missing)
	for i, p := range missing {
		if err := b.record.add(recordEntry{Created: p}); err != nil {
			return fmt.Errorf("record %s: %w", p, err)
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
			return err
		}
		b.Created = append(b.Created, p)
	}
	return nil
}

// Unbind undoes Bind: unmounts in reverse order, then removes the mount
// points it created or adopted (only if still empty), but those another
// live run's record lists: the last run out removes them. With a record,
// it does so under the state lock and removes the record last.
func Unbind(b *Bound) []error {
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
		if inUse[b.Created[i]] {
			continue
		}
		if err := os.Remove(b.Created[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove mount point %s: %w", b.Created[i], err))
		}
	}
	if len(errs) == 0 {
		if err := b.record.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Link stands in for Bind under --volume-root: a symlink at each target
// (under the root) pointing at the volume. No privilege needed.
func Link(mounts []Mount) (*Bound, error) {
	b := &Bound{}
	for _, m := range mounts {
		if err := b.mountPoint(filepath.Dir(m.Target), true); err != nil {
			return b, fmt.Errorf("volume %s: %w", m.Volume, err)
		}
		if m.SubPath != "" {
			// Checked (and created) without following symlinks; the link
			// itself is a path, resolved when used.
			_, done, err := openSource(m)
			if err != nil {
				return b, fmt.Errorf("volume %s: %w", m.Volume, err)
			}
			done()
		}
		if err := os.Symlink(m.sourcePath(), m.Target); err != nil {
			return b, fmt.Errorf("volume %s: %w (the --volume-root must not hold it yet)", m.Volume, err)
		}
		b.Created = append(b.Created, m.Target)
	}
	return b, nil
}

// sourcePath is the volume path m binds, subPath included, for messages and
// for the links of --volume-root.
func (m Mount) sourcePath() string {
	if m.SubPath == "" {
		return m.Source
	}
	return filepath.Join(m.Source, m.SubPath)
}
