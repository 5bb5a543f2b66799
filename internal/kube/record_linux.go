package kube

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A mount point kube play creates lives on the real filesystem: a mount
// namespace isolates mounts, not directories (and covering the parent with
// a tmpfs would hide what the host keeps there). So each run writes down
// what it creates, before creating it, in a record file it holds locked;
// Unbind removes the paths and the record at the end. A run killed with
// SIGKILL cannot: its lock goes with it, and the next run as root finds the
// record unlocked and removes what it lists (CleanStale).

// DefaultStateDir holds the records. It is on disk, not in /run: the mount
// points it lists outlive a reboot.
const DefaultStateDir = "/var/lib/podvisor/kube-play"

// Record is one run's list of what it created, held under an exclusive
// flock for as long as the run lives.
type Record struct {
	f *os.File
}

// recordEntry is one line: a mount point, or the run's temporary directory.
type recordEntry struct {
	Created string `json:"created,omitempty"`
	Tmp     string `json:"tmp,omitempty"`
}

// OpenRecord creates this run's record in dir (mode 0700, created if
// missing) and locks it.
func OpenRecord(dir string) (*Record, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "run-"+strconv.Itoa(os.Getpid())+".jsonl"), os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return &Record{f: f}, nil
}

// privateDir refuses a state directory anyone but us could write into: the
// records name paths to remove.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: not a directory of ours that only we can write", dir)
	}
	return nil
}

func (r *Record) add(e recordEntry) error {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(e) // two strings cannot fail
	if _, err := r.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return r.f.Sync()
}

// Tmp records the run's temporary directory (removed whole by CleanStale).
func (r *Record) Tmp(dir string) error { return r.add(recordEntry{Tmp: dir}) }

// Close removes the record: everything it listed is gone.
func (r *Record) Close() error {
	if r == nil {
		return nil
	}
	err := os.Remove(r.f.Name())
	r.f.Close()
	return err
}

// CleanStale removes what the runs that died without cleaning up created:
// for each record in dir nobody holds locked, its mount points (in reverse
// order, a directory only if empty, a file only if empty) and its temporary
// directory, then the record. It returns the paths removed.
func CleanStale(dir string) ([]string, []error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = privateDir(dir)
	}
	if err != nil {
		return nil, []error{err}
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "run-") || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
			continue
		}
		r, errs1 := cleanRecord(filepath.Join(dir, name))
		removed = append(removed, r...)
		errs = append(errs, errs1...)
	}
	return removed, errs
}

func cleanRecord(path string) ([]string, []error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, []error{err}
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, nil // a live run holds it
	}
	var created, tmps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e recordEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line cut short by the kill
		}
		if e.Created != "" {
			created = append(created, e.Created)
		}
		if e.Tmp != "" {
			tmps = append(tmps, e.Tmp)
		}
	}
	var removed []string
	var errs []error
	slices.Reverse(created)
	for _, p := range created {
		ok, err := removeEmpty(p)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, p)
		}
	}
	for _, p := range tmps {
		// Only a run directory of kube play's, named as tempBase makes them.
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || !strings.HasPrefix(filepath.Base(p), "podvisor-kube-") {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, p)
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(path); err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errs
}

// removeEmpty removes p if it is an empty directory or an empty regular
// file (never a symlink, never anything with content: someone may have
// used the path since).
func removeEmpty(p string) (bool, error) {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return false, nil
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch {
	case fi.IsDir():
		err = unix.Rmdir(p)
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.EBUSY) {
			return false, nil // in use again: leave it
		}
	case fi.Mode().IsRegular() && fi.Size() == 0:
		err = os.Remove(p)
	default:
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return true, nil
}
