package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Pods played on this machine at the same time (docs/kubernetes.md,
// "Several pods at once"): each has a record, PODS/NAME.json, and (unless
// the control socket is set otherwise) its control socket, PODS/NAME.sock.
// The record is created exclusively when the pod starts and removed when
// it ends; one whose process is gone (killed with SIGKILL) is stale, and
// whoever reads it removes it.

// PodRecord is what kube ps shows of a played pod, and what kube down and
// --pod need to reach it.
type PodRecord struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Pid       int    `json:"pid"`
	// Start is the process's start time (/proc/PID/stat, clock ticks
	// since boot): a pid reused by another process is not the pod's.
	Start    uint64    `json:"start"`
	Socket   string    `json:"socket,omitempty"`  // the control socket, "" when off
	Address  string    `json:"address,omitempty"` // the HTTP listener, "" when off
	Since    time.Time `json:"since"`
	Manifest string    `json:"manifest"`
	Claims   []string  `json:"claims,omitempty"` // the claims' directories
}

// PodFile is the record's path in dir; the name must be a DNS subdomain,
// as a pod's name is, so that it is one element of dir.
func PodFile(dir, name string) (string, error) {
	if !dnsSubdomain(name) {
		return "", fmt.Errorf("pod name %q is not a DNS subdomain (lowercase a-z, 0-9, '-' and '.', at most 253 characters), as the API server requires", name)
	}
	return filepath.Join(dir, name+".json"), nil
}

// ErrPodRunning is returned by ClaimPod for a name a live pod holds.
var ErrPodRunning = errors.New("a pod of that name is running")

// ClaimPod writes rec in dir (made 0700 if missing), refusing a name a
// live pod's record holds; a stale record is replaced. The returned
// function removes the record.
func ClaimPod(dir string, rec PodRecord) (release func(), err error) {
	path, err := PodFile(dir, rec.Name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(rec) // plain fields cannot fail
	// Written whole under a temporary name, then linked into place: a
	// reader (kube ps, another play) never sees a half-written record,
	// which it would take for a broken one and remove; link fails when the
	// name exists, as O_EXCL would.
	tmp, err := os.CreateTemp(dir, "."+rec.Name+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	for range 2 {
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		old, rerr := readPod(path)
		if rerr == nil && old.alive() {
			return nil, fmt.Errorf("%w: %s (pid %d, since %s); stop it with podvisor kube down %s", ErrPodRunning, rec.Name, old.Pid, old.Since.Format(time.RFC3339), rec.Name)
		}
		os.Remove(path) // stale, or not a record: replaced
	}
	return nil, fmt.Errorf("%s: cannot create the pod's record", path)
}

func readPod(path string) (PodRecord, error) {
	var rec PodRecord
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err == nil && filepath.Base(path) != rec.Name+".json" {
		err = fmt.Errorf("%s: the record of pod %q", path, rec.Name)
	}
	return rec, err
}

// alive reports whether the record's process still runs.
func (r PodRecord) alive() bool {
	start, err := ProcStart(r.Pid)
	return err == nil && start == r.Start
}

// Pods returns the live pods' records in dir, by name; stale records are
// removed.
func Pods(dir string) ([]PodRecord, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PodRecord
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !dnsSubdomain(name) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		rec, err := readPod(path)
		if err != nil || !rec.alive() {
			os.Remove(path)
			continue
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FindPod returns the live pod named name in dir.
func FindPod(dir, name string) (PodRecord, error) {
	path, err := PodFile(dir, name)
	if err != nil {
		return PodRecord{}, err
	}
	rec, err := readPod(path)
	if err == nil && rec.alive() {
		return rec, nil
	}
	if err == nil {
		os.Remove(path)
	}
	return PodRecord{}, fmt.Errorf("no pod named %q is running here (podvisor kube ps lists them)", name)
}

// ProcStart is process pid's start time in clock ticks since boot
// (/proc/PID/stat field 22).
func ProcStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	if fields[0] == "Z" {
		return 0, fmt.Errorf("pid %d is a zombie", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}
