package testharness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stat is the part of /proc/PID/stat the suites use.
type Stat struct {
	Pid, PPid, Pgrp, Session, TTY int
	State                         byte
	Comm                          string
	// CPU time used so far (utime+stime) and start time after boot; zero
	// when the kernel's line is too short to hold them.
	CPU, Start time.Duration
}

// clockTick is USER_HZ on Linux, the unit of /proc/PID/stat's times.
const clockTick = time.Second / 100

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, err
	}
	// comm is in parentheses and may contain spaces or ')': split at the last ')'.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3, state
	if len(f) < 5 {
		return Stat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	st := Stat{Pid: pid, Comm: s[open+1 : end], State: f[0][0]}
	for i, dst := range []*int{&st.PPid, &st.Pgrp, &st.Session, &st.TTY} {
		if *dst, err = strconv.Atoi(f[i+1]); err != nil {
			return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	if len(f) > 19 {
		ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
		stime, err2 := strconv.ParseInt(f[12], 10, 64)
		start, err3 := strconv.ParseInt(f[19], 10, 64) // field 22
		if err1 != nil || err2 != nil || err3 != nil {
			return Stat{}, fmt.Errorf("/proc/%d/stat: bad utime, stime or starttime", pid)
		}
		st.CPU = time.Duration(ut+stime) * clockTick
		st.Start = time.Duration(start) * clockTick
	}
	return st, nil
}

// StatusField returns the value of "key:" in /proc/PID/status.
func StatusField(pid int, key string) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == key {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("/proc/%d/status has no %s", pid, key)
}

// OpenFDs maps each open fd of pid to its readlink target.
func OpenFDs(pid int) (map[int]string, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fds := make(map[int]string, len(ents))
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		fds[n] = target
	}
	return fds, nil
}

// AllPids lists every process visible in /proc.
func AllPids() []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// Children lists the direct children of pid.
func Children(pid int) []int {
	var out []int
	for _, p := range AllPids() {
		if st, err := ReadStat(p); err == nil && st.PPid == pid {
			out = append(out, p)
		}
	}
	return out
}

// Descendants lists every process below root (not root itself), walking
// parent links in one snapshot of /proc.
func Descendants(root int) []int {
	kids := map[int][]int{}
	for _, p := range AllPids() {
		if st, err := ReadStat(p); err == nil {
			kids[st.PPid] = append(kids[st.PPid], p)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// PIDNamespace is pid's PID namespace as readlink /proc/PID/ns/pid shows it.
func PIDNamespace(pid int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
}

// NamespaceMembers lists the processes in the PID namespace ns (as
// PIDNamespace returns it).
func NamespaceMembers(ns string) []int {
	var out []int
	for _, p := range AllPids() {
		if n, err := PIDNamespace(p); err == nil && n == ns {
			out = append(out, p)
		}
	}
	return out
}

// Zombies returns the pids in state Z.
func Zombies(pids []int) []int {
	var out []int
	for _, p := range pids {
		if st, err := ReadStat(p); err == nil && st.State == 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// PidsWithArg lists processes with an argv element equal to marker.
func PidsWithArg(marker string) []int {
	var out []int
	for _, p := range AllPids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == marker {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
