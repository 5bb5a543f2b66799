package launch

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"time"
)

// seenWithin bounds the wait for a sidecar to be seen asleep: one that never
// sleeps (a busy loop) counts as running after it. The kubelet sees a started
// container at a later sync, about a second on.
const seenWithin = time.Second

// seenPoll is how often /proc is read while a sidecar is watched.
const seenPoll = 2 * time.Millisecond

// WatchSeen calls seen, from a goroutine of its own, once the process pid
// has been seen running after its exec (a sidecar's start gate,
// supervisor/sidecars.go): it reads /proc/PID/stat until the process has
// slept once (it has run its own first instructions: a process that has
// just exec'd is runnable until it first blocks), has gone, or seenWithin
// has passed. Nothing is called once ctx is done.
func (l *Launcher) WatchSeen(ctx context.Context, pid int, seen func()) bool {
	go func() {
		path := "/proc/" + strconv.Itoa(pid) + "/stat"
		t := time.NewTicker(seenPoll)
		defer t.Stop()
		until := time.Now().Add(seenWithin)
		for !slept(path) && time.Now().Before(until) {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		seen()
	}()
	return true
}

// slept reports whether the process of a /proc/PID/stat file is not
// runnable now (asleep, stopped, a zombie), or gone.
func slept(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	switch b[i+2] {
	case 'R', 'D', 'W':
		return false // running, or paging its image in
	}
	return true
}
