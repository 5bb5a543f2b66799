package logs

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// FileOptions describes one process's log file.
type FileOptions struct {
	Path       string
	MaxSize    int64 // bytes: the file is rotated before it grows past this
	MaxFiles   int   // files kept, the current one included (at least 2)
	Compress   bool
	Format     string // "text": the bare line; "json": one object per line
	Timestamps bool   // text: prefix each line with its time
}

// File is a log file rotated by size, written by the pump (and by fallback
// reader goroutines). One File serves every stream and incarnation that
// writes its path, so merged stdout and stderr go through one writer and a
// restart appends to the same file.
//
// Rotation (rotate.go): before a write would take the file past MaxSize,
// the file is renamed (name-TIMESTAMP.ext, an atomic rename) and a new one
// is opened; beyond MaxFiles-1 rotated files the oldest are removed, and
// with Compress rotated files are gzipped, both in the background. Writes
// are whole lines (as many as fit before the file must rotate), so a
// rotated file ends at a line's end.
//
// A failed write (disk full, say) is not fatal: the lines it could not
// write are dropped and counted, the rest of a line cut in the middle is
// kept and written first when a write succeeds again, and nothing blocks.
// So it is with a file refused at open (a symlink or FIFO a process put at
// its log path, safeopen.go): the lines are dropped, and each write tries
// the path again.
type File struct {
	style atomic.Pointer[fileStyle] // read by the pump without mu
	opts  FileOptions

	mu    sync.Mutex // guards rot, opts and the drop state below
	rot   *rotator
	owe   []byte // the rest of a line a failed write cut, written first next time
	drops dropEpisode
}

// files are a sink's log files by path.
type files struct {
	mu sync.Mutex // guards by
	by map[string]*File
}

// File returns the log file at o.Path, opening it on first use (the file
// itself is opened at the first write). A second call for the same path
// returns the same File with o's settings.
func (s *Sink) File(o FileOptions) *File {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	if s.files.by == nil {
		s.files.by = map[string]*File{}
	}
	f := s.files.by[o.Path]
	if f == nil {
		f = &File{rot: &rotator{path: o.Path, now: s.opts.Now, dirfd: -1}}
		s.files.by[o.Path] = f
	}
	f.style.Store(&fileStyle{json: o.Format == "json", stamps: o.Format == "json" || o.Timestamps})
	f.mu.Lock()
	f.opts = o
	f.rot.maxSize = max(o.MaxSize, 1)
	f.rot.maxFiles = max(o.MaxFiles, 2)
	f.rot.compress = o.Compress
	f.mu.Unlock()
	return f
}

// Reopen closes every log file and lets go of its directory, so that the
// next line opens the path again, its directory included (made if
// missing): for an external logrotate, which renames a file and then asks
// for this (SIGUSR1, `podvisor logs --reopen`), and for an operator who
// removed and made the log directory again. It returns how many files were
// closed without error.
func (s *Sink) Reopen() int {
	s.files.mu.Lock()
	fs := make([]*File, 0, len(s.files.by))
	for _, f := range s.files.by {
		fs = append(fs, f)
	}
	s.files.mu.Unlock()
	n := 0
	for _, f := range fs {
		f.mu.Lock()
		if err := f.rot.closeDir(); err == nil {
			n++
		}
		f.mu.Unlock()
	}
	return n
}

// RetainFiles forgets and closes the log files whose paths keep lacks (a
// reload removed or moved them). A stream of an old incarnation that still
// writes one opens it again by itself.
func (s *Sink) RetainFiles(keep func(path string) bool) {
	s.files.mu.Lock()
	var gone []*File
	for path, f := range s.files.by {
		if !keep(path) {
			gone = append(gone, f)
			delete(s.files.by, path)
		}
	}
	s.files.mu.Unlock()
	for _, f := range gone {
		f.mu.Lock()
		_ = f.rot.closeDir()
		f.mu.Unlock()
	}
}

// closeFiles closes every log file and waits for their compression and
// pruning (Close of the sink, which its context bounds).
func (s *Sink) closeFiles() {
	s.Reopen()
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	for _, f := range s.files.by {
		f.rot.millWG.Wait()
		f.mu.Lock()
		_ = f.rot.closeDir()
		f.mu.Unlock()
	}
}

// fileStyle is how a file's lines look.
type fileStyle struct{ json, stamps bool }

// wantsStamp reports whether f's lines carry a time.
func (f *File) wantsStamp() bool { return f.style.Load().stamps }

// format appends one line in f's format: the bare line (text, after an
// optional time), or a JSON object as on podvisor's stdout.
func (f *File) format(dst, stamp []byte, src *source, line []byte, split bool) []byte {
	if f.style.Load().json {
		return appendJSON(dst, stamp, src, line, split)
	}
	if stamp != nil {
		dst = append(dst, stamp...)
		dst = append(dst, ' ')
	}
	dst = append(dst, line...)
	return append(dst, '\n')
}

// writeFile writes b's lines. It never blocks beyond the write itself: on
// failure the lines are dropped and counted against their processes. A
// write takes as many whole lines as fit in the file before it rotates
// (most often all of b: one write per read), so a rotated file ends at a
// line's end and comes as near max_size as its lines allow. Lines are
// counted only when a write fails.
func (s *Sink) writeFile(f *File, b *batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data := b.data
	if err := f.rot.ensureOpen(); err != nil {
		s.drop(b, 0, reason(err))
		f.drops.add(s, f.opts.Path, reason(err), err, b.lines)
		return
	}
	if len(f.owe) > 0 {
		n, err := f.rot.Write(f.owe)
		f.owe = f.owe[n:]
		if err != nil {
			s.drop(b, 0, reason(err))
			f.drops.add(s, f.opts.Path, reason(err), err, b.lines)
			return
		}
	}
	done := 0 // bytes of data written
	for done < len(data) {
		chunk := data[done:]
		if room := f.rot.room(); int64(len(chunk)) > room {
			// The lines that fit; if not even one does, the first,
			// which rotator.Write then puts into a new file.
			i := -1
			if room > 0 {
				i = lastNL(chunk[:room])
			}
			if i < 0 {
				i = bytes.IndexByte(chunk, '\n')
			}
			if i >= 0 {
				chunk = chunk[:i+1]
			}
		}
		n, err := f.rot.Write(chunk)
		done += n
		if err != nil {
			written := uint64(bytes.Count(data[:done], nl))
			if n > 0 && chunk[n-1] != '\n' { // a line cut: finish it later
				end := n + bytes.IndexByte(chunk[n:], '\n') + 1
				f.owe = append(f.owe[:0], chunk[n:end]...)
				written++
			}
			s.drop(b, written, reason(err))
			f.drops.add(s, f.opts.Path, reason(err), err, b.lines-written)
			return
		}
	}
	f.drops.end(s, f.opts.Path)
}

var nl = []byte{'\n'}

// Reasons for dropped lines, the reason label of
// podvisor_log_lines_dropped_total.
const (
	ReasonFull    = "disk_full"      // ENOSPC or EDQUOT writing a log file (or stdout)
	ReasonBlocked = "stdout_blocked" // podvisor's stdout took longer than the stall timeout
	ReasonClosed  = "stdout_closed"  // podvisor's stdout is gone (EPIPE)
	ReasonRefused = "file_refused"   // a log file podvisor will not open: a symlink, FIFO... (safeopen.go)
	ReasonError   = "write_error"    // any other write error
)

// reason classifies a write error.
func reason(err error) string {
	switch {
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return ReasonFull
	case errors.Is(err, unix.EPIPE):
		return ReasonClosed
	case isTimeout(err):
		return ReasonBlocked
	case errors.Is(err, errRefused):
		return ReasonRefused
	}
	return ReasonError
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// dropEpisode turns drops into one warning when they begin and one message
// when writing works again, rather than one per line. Its user's lock
// guards it.
type dropEpisode struct {
	on    bool
	since time.Time
	lines uint64 // dropped in this episode
}

func (d *dropEpisode) add(s *Sink, where, why string, err error, lines uint64) {
	d.lines += lines
	if d.on {
		return
	}
	d.on, d.since = true, time.Now()
	s.logger.Warn("log lines dropped until writing works again", "to", where, "reason", why, "err", err)
}

func (d *dropEpisode) end(s *Sink, where string) {
	if !d.on {
		return
	}
	s.logger.Info("log lines written again", "to", where, "dropped", d.lines, "after", time.Since(d.since).Round(time.Millisecond).String())
	*d = dropEpisode{}
}
