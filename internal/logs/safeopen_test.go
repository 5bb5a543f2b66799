package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
	"golang.org/x/sys/unix"
)

// Issue 34, items 2-5, below the process level: what a process that can
// write its log directory plants there is refused, never followed,
// truncated or waited on. None of this needs root: podvisor follows a
// symlink whoever runs it.

const victimText = "not a log\n"

// plantVictim returns a file outside dir that must stay as it is.
func plantVictim(t *testing.T) string {
	t.Helper()
	v := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(v, []byte(victimText), 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

func wantVictim(t *testing.T, v string) {
	t.Helper()
	if b, err := os.ReadFile(v); err != nil || string(b) != victimText {
		t.Fatalf("victim now %q (%v): written through a planted file", b, err)
	}
}

// lineBatch is one line of process app, as the pump hands writeFile.
func lineBatch(s *Sink, src *source, line string) *batch {
	return &batch{data: []byte(line + "\n"), lines: 1, counts: []srcCount{{src, 1}}}
}

func droppedFor(s *Sink, why string) uint64 {
	var n uint64
	s.DroppedLines(func(p, r string, c uint64) {
		if p == "app" && r == why {
			n += c
		}
	})
	return n
}

// A symlink, a hard link, a FIFO and a symlinked directory at a log path:
// each line is dropped and counted (file_refused), one warning names the
// file, nothing reaches the victim, and the open does not wait for a FIFO's
// reader.
func TestFileRefusesPlanted(t *testing.T) {
	for _, kind := range []string{"symlink", "hardlink", "fifo", "dirlink"} {
		t.Run(kind, func(t *testing.T) {
			victim := plantVictim(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			var err error
			switch kind {
			case "symlink":
				err = os.Symlink(victim, path)
			case "hardlink":
				err = os.Link(victim, path)
			case "fifo":
				err = unix.Mkfifo(path, 0o666)
			case "dirlink":
				// The log directory itself is a link to the victim's.
				real := filepath.Dir(victim)
				dir = filepath.Join(dir, "logs")
				path = filepath.Join(dir, filepath.Base(victim))
				err = os.Symlink(real, dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			var out syncBuffer
			s := NewSink(&out, Options{})
			f := s.File(FileOptions{Path: path, MaxSize: 1 << 20, MaxFiles: 2})
			src := s.newSource("app", "stdout", 0)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < 3; i++ {
					s.writeFile(f, lineBatch(s, src, "line"))
				}
			}()
			select {
			case <-done:
			case <-time.After(testharness.Scale(30*time.Second, slowdownOf(t))):
				t.Fatal("writeFile blocked on the planted file") // a FIFO without a reader, on the old code
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			wantVictim(t, victim)
			if n := droppedFor(s, ReasonRefused); n != 3 {
				t.Errorf("dropped as file_refused: %d, want 3", n)
			}
			if log := out.String(); strings.Count(log, "log lines dropped") != 1 || !strings.Contains(log, "refused") {
				t.Errorf("want one warning that says the file is refused, got:\n%s", log)
			}
		})
	}
}

func slowdownOf(t *testing.T) float64 {
	f, err := testharness.Slowdown()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Rotation against a planter that loops symlink() at the name: every
// line rotates (max_size 1 byte), so the planter soon wins the window
// between the rename and the new file. The name is then refused, never
// followed with O_TRUNC.
func TestRotateRaceWithPlanter(t *testing.T) {
	victim := plantVictim(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	s := NewSink(&syncBuffer{}, Options{})
	f := s.File(FileOptions{Path: path, MaxSize: 1, MaxFiles: 2})
	src := s.newSource("app", "stdout", 0)
	s.writeFile(f, lineBatch(s, src, "first")) // the file exists: only rotation is raced
	var stop atomic.Bool
	planted := make(chan struct{})
	go func() {
		defer close(planted)
		for !stop.Load() {
			_ = unix.Symlink(victim, path)
		}
	}()
	won := testharness.Poll(testharness.Scale(60*time.Second, slowdownOf(t)), 0, func() bool {
		for i := 0; i < 100; i++ {
			s.writeFile(f, lineBatch(s, src, "line"))
		}
		b, _ := os.ReadFile(victim)
		return string(b) != victimText || droppedFor(s, ReasonRefused) > 0
	})
	stop.Store(true)
	<-planted
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantVictim(t, victim)
	if !won {
		t.Fatal("the planter never won a rotation")
	}
}

// Compression writes a temporary file under a random name, created
// exclusively: links planted at the name gzip once used for the rotation's
// time are left alone, and the victim with them.
func TestGzipIgnoresPlantedTemporaries(t *testing.T) {
	victim := plantVictim(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	at := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
	stamp := at.Format(backupTimeFormat)
	for _, name := range []string{"app-" + stamp + ".log.gz.tmp", "app-" + stamp + "-1.log.gz.tmp"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSink(&syncBuffer{}, Options{Now: func() time.Time { return at }})
	f := s.File(FileOptions{Path: path, MaxSize: 1, MaxFiles: 5, Compress: true})
	src := s.newSource("app", "stdout", 0)
	for _, l := range []string{"one", "two", "three"} {
		s.writeFile(f, lineBatch(s, src, l))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.rot.millWG.Wait()
	wantVictim(t, victim)
	for _, name := range []string{"app-" + stamp + ".log.gz", "app-" + stamp + "-1.log.gz"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v %v, want a regular file", name, fi, err)
		}
		if got := string(readLog(t, filepath.Join(dir, name))); got != "one\n" && got != "two\n" {
			t.Errorf("%s holds %q", name, got)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}

// `podvisor logs NAME` reads a log file: a symlink or FIFO planted there
// is refused at once.
func TestOpenLogForReadRefuses(t *testing.T) {
	victim := plantVictim(t)
	dir := t.TempDir()
	link, fifo := filepath.Join(dir, "link.log"), filepath.Join(dir, "fifo.log")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo} {
		if f, err := OpenLogForRead(p); err == nil || !strings.Contains(err.Error(), "refused") {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenLogForRead(%s) = %v, want refused", filepath.Base(p), err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.log"), []byte("x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := OpenLogForRead(filepath.Join(dir, "ok.log"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// An operator removes the log directory and makes it again (clean-up, a
// remounted volume), then asks for a reopen: the next lines land in a new
// file in the new directory, not in the dead one the old descriptor holds.
func TestReopenAfterDirectoryMadeAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	path := filepath.Join(dir, "app.log")
	s := NewSink(&syncBuffer{}, Options{})
	f := s.File(FileOptions{Path: path, MaxSize: 1 << 20, MaxFiles: 2})
	src := s.newSource("app", "stdout", 0)
	s.writeFile(f, lineBatch(s, src, "one"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	s.Reopen()
	s.writeFile(f, lineBatch(s, src, "two"))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "two\n" {
		t.Errorf("after the reopen %s holds %q (%v), want %q", path, got, err, "two\n")
	}
	if n := droppedFor(s, ReasonError); n != 0 {
		t.Errorf("%d lines dropped", n)
	}
}

// The directory is removed (not made again) while the file is open: lines
// go on into the open, unlinked file until it rotates; the rotation sees
// its directory is gone, makes it again by its path, and the next lines
// land there, without a reopen.
func TestRotationAfterDirectoryRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	path := filepath.Join(dir, "app.log")
	s := NewSink(&syncBuffer{}, Options{})
	f := s.File(FileOptions{Path: path, MaxSize: 1, MaxFiles: 2})
	src := s.newSource("app", "stdout", 0)
	s.writeFile(f, lineBatch(s, src, "one"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	s.writeFile(f, lineBatch(s, src, "two")) // rotates: max_size 1
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "two\n" {
		t.Errorf("after the rotation %s holds %q (%v), want %q", path, got, err, "two\n")
	}
	var all uint64
	s.DroppedLines(func(_, _ string, c uint64) { all += c })
	if all != 0 {
		t.Errorf("%d lines dropped", all)
	}
}

// Temporaries a crash left mid-compression (random names, so never
// overwritten) are removed by the mill of their file: a regular file, and
// a symlink as a link (its target untouched). A temporary a compression
// still writes (it holds the file's lock), another file's temporaries and
// names that only look like one are left alone.
func TestMillRemovesStaleTemporaries(t *testing.T) {
	victim := plantVictim(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	old := "app-2026-01-01T00-00-00.000.log"
	stale := []string{"." + old + ".gz.3k9x1.tmp", "." + old + ".gz.zz.tmp"}
	kept := []string{
		".db-2026-01-01T00-00-00.000.log.gz.3k9x1.tmp", // another file's
		"." + old + ".gz.busy.tmp",                     // still written: locked below
		".app.log.gz.x.tmp",                            // not a rotated name
		"." + old + ".gz.fifo.tmp",                     // not a regular file
	}
	if err := os.WriteFile(filepath.Join(dir, stale[0]), []byte("half a gzip"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, stale[1])); err != nil {
		t.Fatal(err)
	}
	for _, k := range kept[:3] {
		if err := os.WriteFile(filepath.Join(dir, k), nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(dir, kept[3]), 0o640); err != nil {
		t.Fatal(err)
	}
	busy, err := os.Open(filepath.Join(dir, kept[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := unix.Flock(int(busy.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s := NewSink(&syncBuffer{}, Options{})
	f := s.File(FileOptions{Path: path, MaxSize: 1, MaxFiles: 5, Compress: true})
	src := s.newSource("app", "stdout", 0)
	for _, l := range []string{"one", "two"} {
		s.writeFile(f, lineBatch(s, src, l))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.rot.millWG.Wait()
	wantVictim(t, victim)
	for _, name := range stale {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("stale temporary %s is left", name)
		}
	}
	for _, name := range kept {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// The explicit reopen looks the directory up again as the first open does:
// a symlink put where the directory was is refused, not followed.
func TestReopenRefusesSymlinkedDirectory(t *testing.T) {
	base := t.TempDir()
	dir, elsewhere := filepath.Join(base, "logs"), filepath.Join(base, "elsewhere")
	path := filepath.Join(dir, "app.log")
	s := NewSink(&syncBuffer{}, Options{})
	f := s.File(FileOptions{Path: path, MaxSize: 1 << 20, MaxFiles: 2})
	src := s.newSource("app", "stdout", 0)
	s.writeFile(f, lineBatch(s, src, "one"))
	if err := os.Rename(dir, filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(elsewhere, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	s.Reopen()
	s.writeFile(f, lineBatch(s, src, "two"))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("written through the symlinked directory: %v", ents)
	}
	if n := droppedFor(s, ReasonRefused); n != 1 {
		t.Errorf("dropped as file_refused: %d, want 1", n)
	}
}
