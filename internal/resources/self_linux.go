package resources

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Self is what one process uses by itself, not its tree: podvisor's own
// process_* metrics.
type Self struct {
	CPUSeconds   float64 // utime+stime
	RSSBytes     uint64
	VirtualBytes uint64
	Threads      int
	OpenFDs      int
	MaxFDs       uint64 // RLIMIT_NOFILE's soft limit
	StartTime    time.Time
}

// ReadSelf reads the calling process's figures from /proc/self.
func ReadSelf() (Self, error) {
	var w walker
	w.buf = make([]byte, 1024)
	b, ok := w.readFile("/proc/self/stat")
	if !ok {
		return Self{}, errors.New("read /proc/self/stat")
	}
	st, ok := parseStat(os.Getpid(), b)
	if !ok {
		return Self{}, fmt.Errorf("parse /proc/self/stat: %q", b)
	}
	s := Self{
		CPUSeconds:   float64(st.ownTicks) / clockTicks,
		RSSBytes:     st.rssPages * uint64(os.Getpagesize()),
		VirtualBytes: st.vsize,
		Threads:      st.threads,
		OpenFDs:      w.countFDs("/proc", os.Getpid()),
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		s.MaxFDs = lim.Cur
	}
	if boot, ok := bootTime(&w); ok {
		ns := int64(st.start) * (int64(time.Second) / clockTicks)
		s.StartTime = boot.Add(time.Duration(ns))
	}
	return s, nil
}

// bootTime is the btime line of /proc/stat.
func bootTime(w *walker) (time.Time, bool) {
	w.buf = make([]byte, 16<<10)
	b, ok := w.readFile("/proc/stat")
	if !ok {
		return time.Time{}, false
	}
	i := bytes.Index(b, []byte("\nbtime "))
	if i < 0 {
		return time.Time{}, false
	}
	line := b[i+len("\nbtime "):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	sec, ok := atou(line)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(int64(sec), 0), true
}
