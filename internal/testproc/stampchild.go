package testproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The effect-level benchmarks' child is bench/stampchild/stampchild.c, a C
// program that appends "NAME KIND NS" (CLOCK_REALTIME) to a file when it has
// exec'd, when it signals readiness, when it receives SIGTERM and just before
// it exits. See that file for its arguments.

var stampChild struct {
	once sync.Once
	path string
	err  error
}

// StampChild builds stampchild once per test binary with the system cc
// (static when the C library allows it: no dynamic loader between exec and
// main) and returns its path. Without a C compiler it skips tb: only
// benchmarks use it, and CI need not run them (scripts/deps.sh gcc installs
// one). run runs a command to completion and returns its combined output;
// it comes from the caller's _test.go file because only internal/proc may
// wait for children in podvisor's own code (call StampChild before starting
// a Reaper, whose wait4(-1) would take the compiler's exit).
func StampChild(tb testing.TB, run func(argv ...string) ([]byte, error)) string {
	tb.Helper()
	stampChild.once.Do(func() { stampChild.path, stampChild.err = buildStampChild(run) })
	if stampChild.err != nil {
		tb.Skip(stampChild.err)
	}
	return stampChild.path
}

func buildStampChild(run func(argv ...string) ([]byte, error)) (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", fmt.Errorf("no C compiler (cc): %w; install one with scripts/deps.sh gcc", err)
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate bench/stampchild")
	}
	src := filepath.Join(filepath.Dir(self), "..", "..", "bench", "stampchild", "stampchild.c")
	dir, err := os.MkdirTemp("", "stampchild")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "stampchild")
	if _, err := run(cc, "-O2", "-static", "-o", out, src); err != nil {
		if msg, err := run(cc, "-O2", "-o", out, src); err != nil {
			return "", fmt.Errorf("cc %s: %v: %s", src, err, msg)
		}
	}
	return out, nil
}

// Stamps maps "NAME KIND" to the instant a stampchild recorded.
type Stamps map[string]time.Time

// ReadStamps parses a stampchild file.
func ReadStamps(path string) (Stamps, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	st := Stamps{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		st[f[0]+" "+f[1]] = time.Unix(0, ns)
	}
	return st, nil
}

// WaitLines waits (polling every millisecond) until path has at least n lines.
func WaitLines(tb testing.TB, path string, n int, limit time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		data, _ := os.ReadFile(path)
		got := bytes.Count(data, []byte("\n"))
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: %d lines after %v, want %d", path, got, limit, n)
		}
		time.Sleep(time.Millisecond)
	}
}
