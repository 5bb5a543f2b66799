package logs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/testproc"
	"golang.org/x/sys/unix"
)

// attachStreams starts argv with its stdout and stderr attached as out and
// err say (Name, Stream and AtEOF are filled in), as the launcher does.
func attachStreams(t testing.TB, r *proc.Reaper, s *Sink, name string, argv []string, out, err Stream) running {
	t.Helper()
	or, ow, e := OpenPipe()
	if e != nil {
		t.Fatal(e)
	}
	er, ew, e := OpenPipe()
	if e != nil {
		t.Fatal(e)
	}
	c, e := proc.Spawn(r, proc.Spec{Argv: argv, Stdout: ow, Stderr: ew})
	ow.Close()
	ew.Close()
	if e != nil {
		unix.Close(or)
		unix.Close(er)
		t.Fatal(e)
	}
	t.Cleanup(func() { _ = c.Signal(syscall.SIGKILL) })
	outc, errc := make(chan struct{}), make(chan struct{})
	out.Name, out.Stream, out.AtEOF = name, "stdout", func() { close(outc) }
	err.Name, err.Stream, err.AtEOF = name, "stderr", func() { close(errc) }
	s.AttachStream(or, out)
	s.AttachStream(er, err)
	return running{c, outc, errc}
}

// logFiles returns the log's files, oldest first: the rotated ones by their
// names' time and number, then the current one.
func logFiles(t *testing.T, path string) []string {
	t.Helper()
	r := &rotator{path: path}
	bs, err := r.backups()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		out = append(out, filepath.Join(filepath.Dir(path), b.name))
	}
	return append(out, path)
}

// readLog reads one file of a log, gunzipping a .gz.
func readLog(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// A flood into a small rotating file: many rotations (several in one
// millisecond), every file within max_size, filled up to it, and ending at
// a line's end, and across the files every line of both streams, merged, in
// order. The file holds bare lines, so a read's lines go in as they came,
// from the read buffer (writeRaw), cut for a rotation at the line that does
// not fit.
func TestFileRotationLosesNothing(t *testing.T) {
	const n, size, maxSize = 40_000, 100, 64 << 10
	r := newReaper(t)
	dir := t.TempDir()
	var out syncBuffer
	s := NewSink(&out, Options{})
	path := filepath.Join(dir, "app.log")
	f := s.File(FileOptions{Path: path, MaxSize: maxSize, MaxFiles: 1000, Format: "text"})
	c := attachStreams(t, r, s, "app", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"), Stream{File: f}, Stream{File: f})
	if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
		t.Fatalf("exit %d", ex.Code())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.rot.millWG.Wait()
	files := logFiles(t, path)
	if len(files) < n*(size+1)/maxSize {
		t.Fatalf("%d files, want at least %d", len(files), n*(size+1)/maxSize)
	}
	next := map[byte]int{}
	var want []byte
	for i, name := range files {
		data := readLog(t, name)
		if len(data) > maxSize {
			t.Errorf("%s: %d bytes, over max_size %d", name, len(data), maxSize)
		}
		// A file is rotated when the next line does not fit: it holds
		// as many whole lines as max_size allows.
		if i < len(files)-1 && len(data) <= maxSize-(size+1) {
			t.Errorf("%s: rotated at %d bytes, a line (%d) before max_size %d", name, len(data), size+1, maxSize)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Fatalf("%s does not end at a line's end", name)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(data, nl), nl) {
			if len(line) == 0 {
				t.Fatalf("%s: empty line", name)
			}
			st := line[0]
			want = testproc.Line(want[:0], st, next[st], size)
			if !bytes.Equal(line, want) {
				t.Fatalf("%s: got %.40q, want %.40q", name, line, want)
			}
			next[st]++
		}
	}
	if next['o'] != n/2 || next['e'] != n/2 {
		t.Errorf("lines o %d, e %d; want %d each", next['o'], next['e'], n/2)
	}
	if s.Dropped() != 0 || out.String() != "" {
		t.Errorf("dropped %d; stdout %q", s.Dropped(), out.String())
	}
}

// JSON lines in the file, old files removed beyond max_files and gzipped.
func TestFileJSONCompressAndPrune(t *testing.T) {
	const n, size = 20_000, 100
	r := newReaper(t)
	dir := t.TempDir()
	s := NewSink(io.Discard, Options{})
	path := filepath.Join(dir, "app.log")
	f := s.File(FileOptions{Path: path, MaxSize: 256 << 10, MaxFiles: 3, Compress: true, Format: "json"})
	c := attachStreams(t, r, s, "app", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"),
		Stream{File: f, Incarnation: 7}, Stream{File: f, Incarnation: 7})
	c.wait(t, 60*time.Second)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.rot.millWG.Wait()
	files := logFiles(t, path)
	if len(files) != 3 {
		t.Fatalf("files %v, want 3 (max_files)", files)
	}
	last := map[string]int{}
	for i, name := range files {
		if gz := strings.HasSuffix(name, ".gz"); gz != (i < 2) {
			t.Errorf("%s: compressed %v", name, gz)
		}
		sc := bufio.NewScanner(bytes.NewReader(readLog(t, name)))
		for sc.Scan() {
			var rec struct {
				Time, Process, Stream, Line string
				Incarnation                 int
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v: %q", name, err, sc.Text())
			}
			if rec.Process != "app" || rec.Incarnation != 7 || rec.Time == "" || map[string]byte{"stdout": 'o', "stderr": 'e'}[rec.Stream] != rec.Line[0] {
				t.Fatalf("%s: %+v", name, rec)
			}
			seq, _ := strconv.Atoi(rec.Line[2:12])
			if prev, ok := last[rec.Stream]; ok && seq != prev+1 {
				t.Fatalf("%s: %s line %d after %d", name, rec.Stream, seq, prev)
			}
			last[rec.Stream] = seq
		}
	}
	if last["stdout"] != n/2-1 || last["stderr"] != n/2-1 {
		t.Errorf("last lines %v, want %d", last, n/2-1)
	}
}

// mountTmpfs mounts a tmpfs of size at a new directory, unmounted at the
// end of the test.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root: the full-disk test did not run")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): the full-disk test did not run", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// A full disk stalls no child: its lines are dropped and counted against it
// with the reason disk_full, one warning says so, and once there is room
// again lines are written again by themselves, starting with a whole line.
func TestFileDiskFull(t *testing.T) {
	const n, size = 100_000, 100 // 10 MB into a 1 MiB file system
	dir := mountTmpfs(t, "1m")
	// Half the room, freed later.
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 512<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReaper(t)
	var out syncBuffer
	s := NewSink(&out, Options{})
	path := filepath.Join(dir, "app.log")
	f := s.File(FileOptions{Path: path, MaxSize: 100 << 20, MaxFiles: 2, Format: "text"})
	c := attachStreams(t, r, s, "app", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "o"), Stream{File: f}, Stream{File: f})
	if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
		t.Fatalf("exit %d", ex.Code())
	}
	dropped := map[string]uint64{}
	s.DroppedLines(func(p, why string, n uint64) { dropped[p+"/"+why] += n })
	if dropped["app/"+ReasonFull] == 0 || dropped["app/"+ReasonFull] != s.Dropped() {
		t.Fatalf("dropped %v, total %d; want all disk_full against app", dropped, s.Dropped())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Count(data, nl)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		kept++ // cut by the full disk, to be finished
	}
	if uint64(kept)+s.Dropped() != n {
		t.Errorf("%d lines in the file + %d dropped, want %d", kept, s.Dropped(), n)
	}

	// Room again: the next child's lines are written, after the rest of
	// the line the disk cut.
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	c = attachStreams(t, r, s, "app", testproc.Argv("print", `after\n`), Stream{File: f}, Stream{File: f})
	c.wait(t, 30*time.Second)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\nafter\n")) {
		t.Errorf("file ends %q, want the new line after a whole line", data[max(0, len(data)-150):])
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, nl), nl) {
		if string(line) != "after" && len(line) != size {
			t.Fatalf("line %d torn: %q", i, line)
		}
	}
	log := out.String()
	if strings.Count(log, "log lines dropped") != 1 || strings.Count(log, "log lines written again") != 1 {
		t.Errorf("want one warning and one resume message, got:\n%s", log)
	}
}

// A stdout nobody reads stalls no child: after the stall timeout its lines
// are dropped and counted (stdout_blocked); once the reader is back, lines
// flow again, whole.
func TestStdoutNobodyReads(t *testing.T) {
	const n, size = 100_000, 100
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	r := newReaper(t)
	s := NewSink(pw, Options{StallTimeout: 50 * time.Millisecond})
	c := attachChild(t, r, s, "p", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "oe"), nil, nil)
	if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
		t.Fatalf("exit %d", ex.Code())
	}
	dropped := map[string]uint64{}
	s.DroppedLines(func(p, why string, n uint64) { dropped[p+"/"+why] += n })
	if dropped["p/"+ReasonBlocked] == 0 {
		t.Fatalf("dropped %v; want p's lines as stdout_blocked", dropped)
	}

	// The reader comes back: what is in the pipe, then new lines, whole.
	v := newVerifier(size)
	copied := make(chan error, 1)
	go func() { _, err := io.Copy(&lineFilter{v: v}, pr); copied <- err }()
	// Lines are dropped until a write finds room: let the reader drain
	// the pipe first.
	rc, err := pr.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 10*time.Second, "the pipe drained", func() bool {
		n, ierr := -1, error(nil)
		_ = rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
		return ierr == nil && n == 0
	})
	c = attachChild(t, r, s, "q", testproc.Argv("lines", "1000", strconv.Itoa(size), "o"), nil, nil)
	c.wait(t, 30*time.Second)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	<-copied
	if v.err != nil {
		t.Fatal(v.err)
	}
	if v.next["q/o"] != 1000 {
		t.Errorf("q: %d lines after the reader came back, want 1000", v.next["q/o"])
	}
}

// lineFilter passes the verifier p's lines only from each stream's first
// line seen on (earlier ones were dropped), and checks that every line is
// whole and framed.
type lineFilter struct {
	v       *verifier
	partial []byte
}

func (l *lineFilter) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.partial[:i]
		name, payload, ok := bytes.Cut(line, []byte(" | "))
		switch {
		case !ok:
			l.v.err = fmt.Errorf("unframed line %q", line)
		case strings.TrimSpace(string(name)) == "p" && len(payload) > 0:
			// p's lines have gaps: check each is whole.
			if len(payload) != l.v.size && l.v.err == nil {
				l.v.err = fmt.Errorf("torn line %q", line)
			}
		default:
			l.v.Write(l.partial[:i+1])
		}
		l.partial = l.partial[i+1:]
	}
}

// An external logrotate renames the file, then asks for a reopen: the next
// lines go to a new file under the name, none is lost or written to the
// renamed one.
func TestFileReopenAfterRename(t *testing.T) {
	r := newReaper(t)
	dir := t.TempDir()
	s := NewSink(io.Discard, Options{})
	path := filepath.Join(dir, "app.log")
	f := s.File(FileOptions{Path: path, MaxSize: 1 << 20, MaxFiles: 2, Format: "text"})
	run := func(text string) {
		c := attachStreams(t, r, s, "app", testproc.Argv("print", text), Stream{File: f}, Stream{File: f})
		c.wait(t, 30*time.Second)
	}
	run(`one\n`)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	run(`two\n`) // still the open file: now app.log.1
	if n := s.Reopen(); n != 1 {
		t.Errorf("Reopen() = %d, want 1", n)
	}
	run(`three\n`)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{path + ".1": "one\ntwo\n", path: "three\n"} {
		if got := string(readLog(t, name)); got != want {
			t.Errorf("%s: %q, want %q", filepath.Base(name), got, want)
		}
	}
}

// RetainFiles closes the files a reload dropped; a later write opens again.
func TestRetainFiles(t *testing.T) {
	dir := t.TempDir()
	s := NewSink(io.Discard, Options{})
	defer s.Close(context.Background())
	a := s.File(FileOptions{Path: filepath.Join(dir, "a.log"), MaxSize: 1 << 20, MaxFiles: 2})
	b := s.File(FileOptions{Path: filepath.Join(dir, "b.log"), MaxSize: 1 << 20, MaxFiles: 2})
	for _, f := range []*File{a, b} {
		bt := &batch{data: []byte("x\n"), lines: 1}
		s.writeFile(f, bt)
	}
	s.RetainFiles(func(path string) bool { return filepath.Base(path) == "a.log" })
	if a.rot.f == nil || b.rot.f != nil {
		t.Errorf("open after RetainFiles: a %v, b %v; want a only", a.rot.f != nil, b.rot.f != nil)
	}
	if got := s.File(FileOptions{Path: filepath.Join(dir, "b.log"), MaxSize: 1 << 20, MaxFiles: 2}); got == b {
		t.Error("a dropped file was kept in the registry")
	}
}

// Timestamps in a text file, through the pump: each line is the read's
// time, a space and the line, every line in order.
func TestFileTimestamps(t *testing.T) {
	const n, size = 20_000, 100
	r := newReaper(t)
	path := filepath.Join(t.TempDir(), "app.log")
	s := NewSink(io.Discard, Options{Now: fixedNow})
	f := s.File(FileOptions{Path: path, MaxSize: 100 << 20, MaxFiles: 2, Format: "text", Timestamps: true})
	c := attachStreams(t, r, s, "app", testproc.Argv("lines", strconv.Itoa(n), strconv.Itoa(size), "o"), Stream{File: f}, Stream{Off: true})
	if ex := c.wait(t, 60*time.Second); ex.Code() != 0 {
		t.Fatalf("exit %d", ex.Code())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	data := readLog(t, path)
	stamp := fixedNow().Format(timeFormat) + " "
	var want []byte
	i := 0
	for line := range bytes.Lines(data) {
		want = append(testproc.Line(append(want[:0], stamp...), 'o', i, size), '\n')
		if !bytes.Equal(line, want) {
			t.Fatalf("line %d: %q, want %q", i, line, want)
		}
		i++
	}
	if i != n {
		t.Fatalf("%d lines, want %d", i, n)
	}
}
