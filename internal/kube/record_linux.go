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
//
// Runs at the same time share mount points. Removing a directory that is a
// mount point in another mount namespace is allowed (Linux 3.18, "vfs:
// Lazily remove mounts on unlinked files and directories") and detaches
// that mount there: a run that removed a directory another run has bound a
// volume on would take the volume from under the other's containers. So a
// run that needs a mount point another run's record lists records it as
// adopted, and a created or adopted path is removed only by the last run
// whose record lists it. The state directory's lock (lockState) orders
// creating, adopting and removing between runs.

// DefaultStateDir holds the records. It is on disk, not in /run: the mount
// points it lists outlive a reboot.
const DefaultStateDir = "/var/lib/podvisor/kube-play"

// Record is one run's list of what it created or adopted, held under an
// exclusive flock for as long as the run lives.
type Record struct {
	f *os.File
}

// stateLockName is the state directory's lock file, never removed (a
// removed lock file would let two runs lock two different files).
const stateLockName = "lock"

// recordEntry is one line: a mount point the run created, one it adopted
// (another run's record listed it when this run needed it), or the run's
// temporary directory.
type recordEntry struct {
	Created string `json:"created,omitempty"`
	Adopted string `json:"adopted,omitempty"`
	Tmp     string `json:"tmp,omitempty"`
	// Image is an image podman mounted for the run (podman image mount,
	// in this machine's mount namespace), written once mounted.
	Image string `json:"image,omitempty"`
	// Given is an image of Image the run gave back itself.
	Given string `json:"given,omitempty"`
	// Beneath is the volume directory the mount point lies in: it is
	// reached from there without following symlinks (see Bind).
	Beneath string `json:"beneath,omitempty"`
}

// mountPoint is the path a created or adopted entry names, or "".
func (e recordEntry) mountPoint() string {
	if e.Created != "" {
		return e.Created
	}
	return e.Adopted
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
	// Under the state lock: other runs try the records' locks under it to
	// tell live runs from dead ones, and must not make ours fail.
	unlock, err := lockState(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// A new file (O_EXCL, never a symlink), not one named after the pid
	// alone: runs as PID 1 of their own PID namespaces share a pid.
	f, err := os.CreateTemp(dir, "run-"+strconv.Itoa(os.Getpid())+"-*.jsonl")
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
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

// lockState waits for the state directory's lock and returns its release.
// It is held while a run creates or adopts mount points (Bind), removes
// them (Unbind, CleanStale), and adds or removes a record, so that no run
// reads the records in the middle of another's change.
func lockState(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, stateLockName), os.O_RDONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// dir is the state directory the record is in.
func (r *Record) dir() string { return filepath.Dir(r.f.Name()) }

// runRecord is a record as another run reads it.
type runRecord struct {
	path   string
	dead   *os.File // for a dead run's record: open, its lock held
	mounts []string // created or adopted, in order
	// beneath maps a mount point of mounts to the volume directory it
	// lies in (recordEntry.Beneath).
	beneath map[string]string
	tmps    []string
	images  []string // podman's image mounts, to give back
}

func (rr *runRecord) close() {
	if rr.dead != nil {
		rr.dead.Close()
	}
}

// readRecords reads every record in dir but the one named own. A record
// whose lock it gets is a dead run's and is returned with the lock held,
// for the caller to clean; the caller closes each. The caller holds the
// state lock.
func readRecords(dir, own string) ([]*runRecord, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rrs []*runRecord
	for _, e := range ents {
		name := e.Name()
		if name == own || !strings.HasPrefix(name, "run-") || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
			continue
		}
		rr, err := readRecord(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since ReadDir (by a run without the state lock)
		}
		if err != nil {
			for _, rr := range rrs {
				rr.close()
			}
			return nil, err
		}
		rrs = append(rrs, rr)
	}
	return rrs, nil
}

func readRecord(path string) (*runRecord, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	rr := &runRecord{path: path}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		rr.dead = f
	} else {
		defer f.Close() // a live run holds it
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e recordEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line cut short by a kill, or still being written
		}
		if p := e.mountPoint(); p != "" {
			rr.mounts = append(rr.mounts, p)
			if e.Beneath != "" {
				if rr.beneath == nil {
					rr.beneath = map[string]string{}
				}
				rr.beneath[p] = e.Beneath
			}
		}
		if e.Tmp != "" {
			rr.tmps = append(rr.tmps, e.Tmp)
		}
		if e.Image != "" {
			rr.images = append(rr.images, e.Image)
		}
		if e.Given != "" {
			if i := slices.Index(rr.images, e.Given); i >= 0 {
				rr.images = slices.Delete(rr.images, i, i+1)
			}
		}
	}
	if err := sc.Err(); err != nil {
		rr.close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return rr, nil
}

// listedBy returns the mount points the records list; with live, only
// those of live runs.
func listedBy(rrs []*runRecord, live bool) map[string]bool {
	m := map[string]bool{}
	for _, rr := range rrs {
		if live && rr.dead != nil {
			continue
		}
		for _, p := range rr.mounts {
			m[p] = true
		}
	}
	return m
}

// othersListed returns what the records in r's directory other than r
// list (with live, only live runs' records). The caller holds the state
// lock.
func (r *Record) othersListed(live bool) (map[string]bool, error) {
	rrs, err := readRecords(r.dir(), filepath.Base(r.f.Name()))
	if err != nil {
		return nil, err
	}
	for _, rr := range rrs {
		rr.close()
	}
	return listedBy(rrs, live), nil
}

func (r *Record) add(e recordEntry) error {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(e) // strings cannot fail
	if _, err := r.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return r.f.Sync()
}

// Tmp records the run's temporary directory (removed whole by CleanStale).
func (r *Record) Tmp(dir string) error { return r.add(recordEntry{Tmp: dir}) }

// Image records an image podman mounted for the run, once mounted: a
// kill between the mount and the record leaves that one mount to
// `podman image unmount`, rather than have a cleaner give back another
// run's mount of the same image (podman counts them).
func (r *Record) Image(ref string) error { return r.add(recordEntry{Image: ref}) }

// ImageGiven records that the run gave back its mount of ref: a cleaner
// must not give it back again (it would take another run's).
func (r *Record) ImageGiven(ref string) error { return r.add(recordEntry{Given: ref}) }

// Inherit keeps the record open, and so locked, across an exec: it returns
// the descriptor and the record's path, for RecordFromFD in the new
// program. A record opened before podman mounts the images stays the
// run's through kube play's re-exec into its mount namespace, never
// unlocked in between.
func (r *Record) Inherit() (fd int, path string, err error) {
	if _, err := unix.FcntlInt(r.f.Fd(), unix.F_SETFD, 0); err != nil {
		return -1, "", fmt.Errorf("record %s: %w", r.f.Name(), err)
	}
	return int(r.f.Fd()), r.f.Name(), nil
}

// RecordFromFD takes back the record Inherit passed across an exec: fd
// must be the file at path, a record in a state directory of ours.
func RecordFromFD(fd int, path string) (*Record, error) {
	unix.CloseOnExec(fd) // not for the children
	var st unix.Stat_t
	fi, err := os.Lstat(path)
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	if err == nil {
		ls, ok := fi.Sys().(*syscall.Stat_t)
		name := filepath.Base(path)
		if !ok || !fi.Mode().IsRegular() || ls.Dev != st.Dev || ls.Ino != st.Ino ||
			!strings.HasPrefix(name, "run-") || !strings.HasSuffix(name, ".jsonl") {
			err = errors.New("not the record kube play passed on")
		} else {
			err = privateDir(filepath.Dir(path))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("record %s (fd %d): %w", path, fd, err)
	}
	return &Record{f: os.NewFile(uintptr(fd), path)}, nil
}

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
// order, a directory only if empty, a file only if empty, and none a live
// run's record lists: that run uses it) and its temporary directory, gives
// back podman's mounts of its images through unmountImages, then removes
// the record. It returns what it removed. A record whose images cannot be
// given back (unmountImages nil or failing) stays, for the next cleaner.
func CleanStale(dir string, unmountImages func(refs []string) error) ([]string, []error) {
	_, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = privateDir(dir)
	}
	if err != nil {
		return nil, []error{err}
	}
	unlock, err := lockState(dir)
	if err != nil {
		return nil, []error{err}
	}
	defer unlock()
	rrs, err := readRecords(dir, "")
	if err != nil {
		return nil, []error{err}
	}
	live := listedBy(rrs, true)
	var removed []string
	var errs []error
	for _, rr := range rrs {
		if rr.dead != nil {
			r, errs1 := cleanRecord(rr, live, unmountImages)
			removed = append(removed, r...)
			errs = append(errs, errs1...)
		}
		rr.close()
	}
	return removed, errs
}

// cleanRecord removes what a dead run's record lists but what live runs'
// records list (live), then the record.
func cleanRecord(rr *runRecord, live map[string]bool, unmountImages func([]string) error) ([]string, []error) {
	var removed []string
	var errs []error
	for _, p := range slices.Backward(rr.mounts) {
		if live[p] {
			continue
		}
		var ok bool
		var err error
		if root, in := rr.beneath[p]; in {
			// From the outermost volume directory: the mount points
			// between it and p (volumes bound inside it) are plain
			// directories now, and walked without following symlinks.
			for range len(rr.beneath) { // a bound: a record is no proof against a cycle
				up, ok := rr.beneath[root]
				if !ok {
					break
				}
				root = up
			}
			ok, err = removeBeneath(-1, root, p, false)
		} else {
			ok, err = removeEmpty(p)
		}
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, p)
		}
	}
	for _, p := range rr.tmps {
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
	if len(rr.images) > 0 {
		err := errors.New("no way to reach podman's mount namespace here")
		if unmountImages != nil {
			err = unmountImages(rr.images)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("images %s a killed run mounted, left mounted (%s keeps them listed; podman image unmount gives them back): %w", strings.Join(rr.images, ", "), rr.path, err))
		} else {
			for _, ref := range rr.images {
				removed = append(removed, "image mount "+ref)
			}
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(rr.path); err != nil {
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
