package proc

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// fdSize returns the size of this process's fd table (FDSize in status).
func fdSize(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "FDSize:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no FDSize in /proc/self/status")
	return 0
}

// The table grows once to the reserved size and then holds that many fds
// without growing again; no fd is left open or taken over.
func TestReserveFDsGrowsTheTableOnce(t *testing.T) {
	before := fdSize(t)
	open := dirEntries(t, "/proc/self/fd")
	want := 4 * before
	if err := ReserveFDs(want); err != nil {
		t.Fatal(err)
	}
	if got := fdSize(t); got < want {
		t.Fatalf("fd table holds %d after ReserveFDs(%d), was %d", got, want, before)
	}
	if n := dirEntries(t, "/proc/self/fd"); n != open {
		t.Errorf("%d fds open after ReserveFDs, %d before", n, open)
	}
	size := fdSize(t)
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for len(files) < want-open-8 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if got := fdSize(t); got != size {
		t.Errorf("the table grew from %d to %d while filling the reserve", size, got)
	}
	// A table already big enough stays as it is.
	if err := ReserveFDs(10); err != nil {
		t.Fatal(err)
	}
	if got := fdSize(t); got != size {
		t.Errorf("ReserveFDs(10) changed the table from %d to %d", size, got)
	}
}

// F_DUPFD, not dup2: an fd in use at the reserved number stays open.
func TestReserveFDsKeepsAnFDAtTheTop(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := ReserveFDs(fd + 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(); err != nil {
		t.Fatalf("fd %d, the reserve's top, was closed: %v", fd, err)
	}
}
