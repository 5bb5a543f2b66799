// Package testharness is the one harness of podvisor's black-box suites
// (test/e2e, test/kube, test/examples, test/image): it builds the podvisor
// binary once per source tree, starts processes and records how they exit,
// polls conditions under deadlines, reads /proc, parses the event files
// children stamp, and cleans up after them.
//
// It is an ordinary package (not a _test file) so that every suite imports
// the same code: a fix to one helper reaches all four. It never calls into
// testing itself; each suite wraps these functions in its own helpers that
// fail its tests the way it always has.
//
// Synchronisation is always a condition polled under a deadline (Poll), never
// a bare sleep.
package testharness
