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
