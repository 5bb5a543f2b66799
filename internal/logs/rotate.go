package logs

import (
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// rotator is a file rotated by size. Before a write would take the file
// past maxSize, the file is renamed to its name with the rotation's time
// (UTC) before the extension, app-2026-01-02T03-04-05.000.log (lumberjack's
// and logrotate's dateext naming), with -1, -2... added if that name is
// taken, and a new file is opened under the name. Renames are atomic: a
// reader sees the old file or the new one, never a half. Rotated files
// beyond maxFiles-1 are removed, oldest first, and with compress gzipped
// (name.gz), both by a goroutine that runs only while there is such work.
//
// Why not lumberjack, the usual library: it names a rotated file by the
// millisecond only and renames over an existing one, so two rotations in
// one millisecond (1 MiB files under a flood of 1 GB/s) lose a whole file;
// its sizes are whole megabytes; and every logger keeps a goroutine forever.
//
// The caller serialises Write, Close and Reopen (File.mu).
type rotator struct {
	path     string
	maxSize  int64
	maxFiles int
	compress bool
	now      func() time.Time

	dirfd int // the directory, opened at the first open (safeopen.go); -1 until then
	f     *os.File
	size  int64

	millMu  sync.Mutex // guards milling and again
	milling bool
	again   bool
	millWG  sync.WaitGroup // the running mill, for tests and Close
}

// Write appends p, rotating first if p would take the file past maxSize
// (unless the file is empty: a write bigger than maxSize still goes whole).
func (r *rotator) Write(p []byte) (int, error) {
	if err := r.ensureOpen(); err != nil {
		return 0, err
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxSize {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// room returns how many bytes the file takes before a write rotates it
// (ensureOpen first: the size of a file not open is not known).
func (r *rotator) room() int64 { return r.maxSize - r.size }

// ensureOpen opens the file if it is not open.
func (r *rotator) ensureOpen() error {
	if r.f != nil {
		return nil
	}
	return r.open()
}

// open opens the file for appending, creating it and its directory, in
// the directory held open (safeopen.go). A held directory that has been
// removed (rm -rf of the log directory) is let go of first, so the path's
// directory is opened, or made, again.
func (r *rotator) open() error {
	r.dropRemovedDir()
	if r.dirfd < 0 {
		fd, err := openDir(filepath.Dir(r.path))
		if err != nil {
			return err
		}
		r.dirfd = fd
	}
	f, err := openAt(r.dirfd, filepath.Base(r.path), r.path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o640)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, info.Size()
	return nil
}

// rotate renames the current file aside and creates a new one. The name
// is created exclusively; if something took it meanwhile, it is opened as
// at any open, so a symlink or FIFO planted there is refused, never
// followed or truncated.
func (r *rotator) rotate() error {
	r.f.Close()
	r.f = nil
	if r.dropRemovedDir() {
		// Nothing to rename in a removed directory: a new file in
		// the directory made again.
		return r.open()
	}
	name, err := r.backupName()
	if err != nil {
		return err
	}
	base := filepath.Base(r.path)
	if err := unix.Renameat(r.dirfd, base, r.dirfd, name); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.LinkError{Op: "rename", Old: r.path, New: name, Err: err}
	}
	f, err := openAt(r.dirfd, base, r.path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL, 0o640)
	if errors.Is(err, unix.EEXIST) {
		err = r.open()
		if err == nil {
			r.kickMill()
		}
		return err
	}
	if err != nil {
		return err
	}
	r.f, r.size = f, 0
	r.kickMill()
	return nil
}

// Close closes the file; the next Write opens the path again (which an
// external logrotate may have renamed meanwhile).
func (r *rotator) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// closeDir closes the file and lets go of the directory: the next open
// opens the directory by its path again (making it if it is missing).
func (r *rotator) closeDir() error {
	err := r.Close()
	if r.dirfd >= 0 {
		unix.Close(r.dirfd)
		r.dirfd = -1
	}
	return err
}

// dropRemovedDir lets go of the held directory if it has been removed (no
// link left: nothing can be created in it again) and reports whether it
// did. A directory renamed away keeps its link and is kept.
func (r *rotator) dropRemovedDir() bool {
	if r.dirfd < 0 {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(r.dirfd, &st); err != nil || st.Nlink > 0 {
		return false
	}
	unix.Close(r.dirfd)
	r.dirfd = -1
	return true
}

const backupTimeFormat = "2006-01-02T15-04-05.000"

// split returns the path's directory, the name before the extension, and
// the extension.
func (r *rotator) split() (dir, prefix, ext string) {
	dir, base := filepath.Split(r.path)
	ext = filepath.Ext(base)
	return dir, strings.TrimSuffix(base, ext), ext
}

// backupName returns a name in the directory for the file being rotated
// that no file has, compressed or not.
func (r *rotator) backupName() (string, error) {
	_, prefix, ext := r.split()
	stamp := r.now().UTC().Format(backupTimeFormat)
	for i := 0; i < 1000; i++ {
		name := prefix + "-" + stamp
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		name += ext
		if !existsAt(r.dirfd, name) && !existsAt(r.dirfd, name+".gz") {
			return name, nil
		}
	}
	return "", fmt.Errorf("rotate %s: no free name for the time %s", r.path, stamp)
}

// backup is a rotated file found in the directory.
type backup struct {
	name  string // base name
	stamp string
	seq   int
	gz    bool
}

// backups lists the rotated files of r, oldest first, opening its
// directory by its path (for tests; the mill lists the one it holds).
func (r *rotator) backups() ([]backup, error) {
	dfd, err := openDir(filepath.Dir(r.path))
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	_, prefix, ext := r.split()
	return listBackups(dfd, prefix, ext)
}

// listBackups lists the rotated files PREFIX-STAMP[-SEQ]EXT[.gz] in the
// directory dfd, oldest first: regular files only.
func listBackups(dfd int, prefix, ext string) ([]backup, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("openat", err)
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []backup
	for _, e := range entries {
		if b, ok := parseBackup(e.Name(), prefix, ext); ok && e.Type().IsRegular() {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b backup) int {
		return cmp.Or(strings.Compare(a.stamp, b.stamp), cmp.Compare(a.seq, b.seq))
	})
	return out, nil
}

// parseBackup recognises PREFIX-STAMP[-SEQ]EXT[.gz].
func parseBackup(name, prefix, ext string) (backup, bool) {
	b := backup{name: name}
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return b, false
	}
	if r, gz := strings.CutSuffix(rest, ".gz"); gz {
		rest, b.gz = r, true
	}
	if rest, ok = strings.CutSuffix(rest, ext); !ok || len(rest) < len(backupTimeFormat) {
		return b, false
	}
	b.stamp = rest[:len(backupTimeFormat)]
	if _, err := time.Parse(backupTimeFormat, b.stamp); err != nil {
		return b, false
	}
	if seq := rest[len(backupTimeFormat):]; seq != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(seq, "-"))
		if err != nil || !strings.HasPrefix(seq, "-") || n <= 0 {
			return b, false
		}
		b.seq = n
	}
	return b, true
}

// kickMill makes sure the mill runs after this rotation.
func (r *rotator) kickMill() {
	r.millMu.Lock()
	defer r.millMu.Unlock()
	if r.milling {
		r.again = true
		return
	}
	// The mill's own descriptor of the directory: the rotator may close
	// its own (closeDir) while the mill runs.
	dfd, err := unix.FcntlInt(uintptr(r.dirfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return // fds exhausted: the next rotation's mill does this one's work
	}
	r.milling = true
	r.millWG.Add(1)
	go r.mill(dfd)
}

// mill removes the rotated files beyond maxFiles-1 and compresses the
// others, until a round finds no new rotation; then it ends.
func (r *rotator) mill(dfd int) {
	defer r.millWG.Done()
	defer unix.Close(dfd)
	for {
		r.millOnce(dfd)
		r.millMu.Lock()
		if !r.again {
			r.milling = false
			r.millMu.Unlock()
			return
		}
		r.again = false
		r.millMu.Unlock()
	}
}

func (r *rotator) millOnce(dfd int) {
	_, prefix, ext := r.split()
	removeStaleTemps(dfd, prefix, ext)
	bs, err := listBackups(dfd, prefix, ext)
	if err != nil {
		return
	}
	keep := r.maxFiles - 1
	for len(bs) > keep {
		_ = unix.Unlinkat(dfd, bs[0].name, 0)
		bs = bs[1:]
	}
	if !r.compress {
		return
	}
	for _, b := range bs {
		if !b.gz {
			_ = gzipAt(dfd, b.name)
		}
	}
}

// gzipAt replaces name by name.gz in the directory dfd: written to a new
// file under a random name (O_EXCL: never a file planted in advance) and
// renamed into place. A source that is not a regular file of one link is
// left alone.
func gzipAt(dfd int, name string) error {
	in, err := openAt(dfd, name, name, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	tmp, out, err := createTemp(dfd, name, uint32(info.Mode().Perm()))
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		// Renamed while its lock is held: once the lock is free, a
		// temporary under the name is stale.
		err = unix.Renameat(dfd, tmp, dfd, name+".gz")
		if err != nil {
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	} else {
		_ = unix.Unlinkat(dfd, tmp, 0)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return unix.Unlinkat(dfd, name, 0)
}

// createTemp creates a temporary file for name.gz in dfd under a random
// name (O_EXCL: never a file planted in advance) and holds its lock while
// it is written, which tells removeStaleTemps it is not stale. The lock is
// taken without waiting: someone else holding it (a cleaner between its
// check and its unlink, or a process that can open files in the
// directory) costs this name, never a wait. A cleaner may also take the
// name between the create and the lock: then the file has no link left
// once the lock is ours. Either way another name is tried, a few times.
func createTemp(dfd int, name string, perm uint32) (string, *os.File, error) {
	var err error
	for try := 0; try < 3; try++ {
		tmp := "." + name + ".gz." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
		var out *os.File
		out, err = openAt(dfd, tmp, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, perm)
		if err != nil {
			return "", nil, err
		}
		var st unix.Stat_t
		if err = unix.Flock(int(out.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			err = unix.Fstat(int(out.Fd()), &st)
		}
		if err == nil && st.Nlink > 0 {
			return tmp, out, nil
		}
		if err == nil {
			err = unix.ENOENT // removed by a cleaner
		} else {
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
		out.Close()
		err = &os.PathError{Op: "lock", Path: tmp, Err: err}
	}
	return "", nil, err
}

// removeStaleTemps removes the temporaries of this log's rotated files
// (.PREFIX-STAMP[-SEQ]EXT.gz.RANDOM.tmp) that a crash left in dfd. A
// symlink is unlinked, never followed; a regular file only if its lock is
// free (no compression writes it: gzipAt holds the lock until the file is
// renamed into place), and while the lock is held, so a compression that
// created it a moment ago sees it unlinked and takes another name. Other
// kinds of file are left alone. Errors are ignored: the next round tries
// again.
func removeStaleTemps(dfd int, prefix, ext string) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	for _, n := range names {
		if isTempOf(n, prefix, ext) {
			removeStaleTemp(dfd, n)
		}
	}
}

// isTempOf recognises .PREFIX-STAMP[-SEQ]EXT.gz.RANDOM.tmp.
func isTempOf(name, prefix, ext string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	if rest, ok = strings.CutSuffix(rest, ".tmp"); !ok {
		return false
	}
	i := strings.LastIndex(rest, ".gz.")
	if i < 0 || i+len(".gz.") == len(rest) {
		return false
	}
	_, ok = parseBackup(rest[:i], prefix, ext)
	return ok
}

func removeStaleTemp(dfd int, name string) {
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		_ = unix.Unlinkat(dfd, name, 0)
		return
	case unix.S_IFREG:
	default:
		return
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if unix.Fstat(fd, &now) != nil || now.Mode&unix.S_IFMT != unix.S_IFREG || now.Ino != st.Ino || now.Dev != st.Dev {
		return
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // a compression writes it
	}
	_ = unix.Unlinkat(dfd, name, 0)
}
