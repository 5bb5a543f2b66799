package logs

import (
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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

	f    *os.File
	size int64

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

// open opens the file for appending, creating it and its directory.
func (r *rotator) open() error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
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

// rotate renames the current file aside and opens a new one.
func (r *rotator) rotate() error {
	r.f.Close()
	r.f = nil
	name, err := r.backupName()
	if err != nil {
		return err
	}
	if err := os.Rename(r.path, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_TRUNC, 0o640)
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

const backupTimeFormat = "2006-01-02T15-04-05.000"

// split returns the path's directory, the name before the extension, and
// the extension.
func (r *rotator) split() (dir, prefix, ext string) {
	dir, base := filepath.Split(r.path)
	ext = filepath.Ext(base)
	return dir, strings.TrimSuffix(base, ext), ext
}

// backupName returns a name for the file being rotated that no file has,
// compressed or not.
func (r *rotator) backupName() (string, error) {
	dir, prefix, ext := r.split()
	stamp := r.now().UTC().Format(backupTimeFormat)
	for i := 0; i < 1000; i++ {
		name := prefix + "-" + stamp
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		name = filepath.Join(dir, name+ext)
		if !exists(name) && !exists(name+".gz") {
			return name, nil
		}
	}
	return "", fmt.Errorf("rotate %s: no free name for the time %s", r.path, stamp)
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// backup is a rotated file found in the directory.
type backup struct {
	name  string // base name
	stamp string
	seq   int
	gz    bool
}

// backups lists the rotated files of r, oldest first.
func (r *rotator) backups() ([]backup, error) {
	dir, prefix, ext := r.split()
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
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
	r.milling = true
	r.millWG.Add(1)
	go r.mill()
}

// mill removes the rotated files beyond maxFiles-1 and compresses the
// others, until a round finds no new rotation; then it ends.
func (r *rotator) mill() {
	defer r.millWG.Done()
	for {
		r.millOnce()
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

func (r *rotator) millOnce() {
	dir, _, _ := r.split()
	bs, err := r.backups()
	if err != nil {
		return
	}
	keep := r.maxFiles - 1
	for len(bs) > keep {
		_ = os.Remove(filepath.Join(dir, bs[0].name))
		bs = bs[1:]
	}
	if !r.compress {
		return
	}
	for _, b := range bs {
		if !b.gz {
			_ = gzipFile(filepath.Join(dir, b.name))
		}
	}
}

// gzipFile replaces name by name.gz, written aside and renamed into place.
func gzipFile(name string) error {
	in, err := os.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	tmp := name + ".gz.tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if err == nil {
		err = zw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name+".gz")
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Remove(name)
}
