package logs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A blocking pipe stdout gets a second, non-blocking open file with write
// deadlines; the inherited one keeps its flags. A regular file stays as is.
func TestPollableStdout(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	defer r.Close()
	defer w.Close()
	pw := PollableStdout(w)
	if pw == w {
		t.Fatal("a pipe was not reopened")
	}
	defer pw.Close()
	if fl, _ := unix.FcntlInt(uintptr(p[1]), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
		t.Error("the inherited open file became non-blocking")
	}
	// Nobody reads: a write fills the pipe and then times out.
	if err := pw.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatalf("no deadlines: %v", err)
	}
	_, err := pw.Write(make([]byte, 1<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a full pipe: %v, want a timeout", err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if PollableStdout(f) != f {
		t.Error("a regular file was reopened")
	}
}
