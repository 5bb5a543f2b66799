package testharness

import (
	"fmt"
	"os"
	"testing"
)

// Main is a suite's TestMain: it runs Setup, hands the binary and the
// slowdown factor to use (which sets the suite's variables and may prepare
// more), runs the tests and exits. A failed setup exits 2 with the reason on
// stderr, prefixed by suite.
func Main(m *testing.M, suite string, use func(bin string, slowdown float64) error) {
	bin, slowdown, err := Setup()
	if err == nil {
		err = use(bin, slowdown)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", suite, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// Setup is what a suite's TestMain needs before m.Run: the slowdown factor
// (see Slowdown) and the podvisor binary (see Binary).
func Setup() (bin string, slowdown float64, err error) {
	if slowdown, err = Slowdown(); err != nil {
		return "", 1, err
	}
	bin, err = Binary()
	return bin, slowdown, err
}

// Cleaner is the part of testing.TB that SharedTempDir needs.
type Cleaner interface{ Cleanup(func()) }

// SharedTempDir makes a fresh directory with mode under os.TempDir(), a path
// every user can reach (t.TempDir's parents are 0700), and removes it on
// c's cleanup.
func SharedTempDir(c Cleaner, pattern string, mode os.FileMode) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	c.Cleanup(func() { os.RemoveAll(dir) })
	return dir, os.Chmod(dir, mode)
}
