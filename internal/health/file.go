package health

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// mtimeSlack forgives file timestamps for lagging the start time: the kernel
// stamps files from its coarse clock, which trails time.Now by up to one tick
// (10 ms at HZ=100), so a file the process writes right after start could
// otherwise look older than the start.
const mtimeSlack = 10 * time.Millisecond

// fileChecker succeeds when path exists and was modified at or after since,
// so a file left over from an earlier run never counts (docs/reference.md, "Probes"). It
// only stats the path (following symlinks; a dangling one is a failure) and
// never reads the file. A file that disappears later is a failure again, so
// readiness after start turns false after failure_threshold checks.
type fileChecker struct {
	path  string
	since time.Time
}

var _ Checker = (*fileChecker)(nil)

// NewFileChecker returns a checker for path that ignores files last modified
// before since (the process's latest start).
func NewFileChecker(path string, since time.Time) (Checker, error) {
	if path == "" {
		return nil, errors.New("file probe: empty path")
	}
	return &fileChecker{path: path, since: since}, nil
}

func (c *fileChecker) Check(context.Context) Result {
	fi, err := os.Stat(c.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure("%s does not exist", c.path)
	case err != nil:
		return failure("%v", err)
	}
	since := c.since.Add(-mtimeSlack)
	if mt := fi.ModTime(); mt.Nanosecond() == 0 {
		// Whole seconds: a file system with coarse timestamps (ext3's
		// small inodes, FAT, some network and emulated ones: qemu-user
		// for s390x drops the nanoseconds), where a file written in the
		// start's own second reads as older than the start.
		since = since.Truncate(time.Second)
	}
	if mt := fi.ModTime(); mt.Before(since) {
		return failure("%s is stale: modified %s, before the process started at %s",
			c.path, mt.Format(time.RFC3339Nano), c.since.Format(time.RFC3339Nano))
	}
	return Result{OK: true, Detail: fmt.Sprintf("%s exists", c.path)}
}
