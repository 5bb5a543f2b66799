package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Adopt registers pid, a process podvisor did not spawn (the daemon a
// process names with MAINPID= or in a pid file), as if Spawn had started
// it: its exit goes to onExit and to the Child's Done once the reaper reaps
// it, and the Child signals it as a spawned one (its group if it leads one,
// else itself). podvisor must be its reaper by then: its parent exits and
// it is reparented to podvisor (PID 1, or a child subreaper). The check
// that pid is alive and the registration happen with reaping held off, so
// an exit is never missed between them. A pid registered already (a
// process podvisor spawned or adopted) is refused.
func (r *Reaper) Adopt(pid int, onExit func(Exit)) (*Child, error) {
	if pid <= 1 || pid == os.Getpid() {
		return nil, fmt.Errorf("pid %d cannot be adopted", pid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	if _, ok := r.children[pid]; ok {
		return nil, fmt.Errorf("pid %d is supervised already", pid)
	}
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return nil, fmt.Errorf("pid %d: %w", pid, wrapKill(err))
	}
	e := &entry{exit: make(chan Exit, 1), onExit: onExit}
	r.children[pid] = e
	return &Child{r: r, pid: pid, e: e, done: e.exit}, nil
}

// Info is what podvisor reads of a process to decide whether it may be
// named as a process's main pid (internal/launch/mainpid.go).
type Info struct {
	PPid, Pgrp int
	UID        int // real uid
}

// ReadInfo reads pid's parent, process group and real uid from /proc.
func ReadInfo(pid int) (Info, error) {
	st, err := readStat(pid)
	if err != nil {
		return Info{}, err
	}
	if st.zombie() {
		return Info{}, fmt.Errorf("pid %d has exited", pid)
	}
	uid, err := realUID(pid)
	if err != nil {
		return Info{}, err
	}
	return Info{PPid: st.ppid, Pgrp: st.pgrp, UID: uid}, nil
}

// realUID is the first (real) uid of the Uid: line of /proc/<pid>/status.
func realUID(pid int) (int, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Uid:")); ok {
			fs := bytes.Fields(v)
			if len(fs) == 0 {
				break
			}
			return strconv.Atoi(string(fs[0]))
		}
	}
	return 0, fmt.Errorf("no Uid in /proc/%d/status", pid)
}
