package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// oom: a process that allocates past its memory.max is OOM-killed, its
// neighbour runs on, /status names the kill (reason OOMKilled, exit 137,
// oom_kills); and memory.oom.group takes its whole tree with it: a daemon
// it started in a session of its own (out of the process group podvisor
// signals) dies with it, by the kernel's hand, not podvisor's.
func oom(r *reporter) {
	start := time.Now()
	fail := func(err error) {
		r.result("oom", start, "", err)
		r.result("oom-group", start, "", err)
	}
	dir, err := newCgroup("oom")
	if err != nil {
		fail(err)
		return
	}
	fifo := filepath.Join(work, "oom.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		fail(err)
		return
	}
	defer os.Remove(fifo)
	const daemonMark, neighbourMark = "900004", "900005"
	run, err := startRun("oom", dir, 8102, `processes:
  hog:
    command: "setsid sleep `+daemonMark+` & exec /bin/guest hog `+fifo+`"
    resources: {memory: {max: 32Mi}}
    restart: {policy: always, backoff: 1h}
  neighbour:
    command: [sleep, '`+neighbourMark+`']
`)
	if err != nil {
		fail(err)
		return
	}
	defer func() {
		_, _ = run.stop(30 * time.Second)
		if err := run.clean(); err != nil {
			r.result("oom-clean", start, "", err)
		}
	}()
	if _, err := run.running("hog", "neighbour"); err != nil {
		fail(err)
		return
	}
	daemon, err1 := onePid(daemonMark)
	neighbour, err2 := onePid(neighbourMark)
	hogCg := filepath.Join(dir, "p-hog.1")
	if err := errors.Join(err1, err2,
		want(filepath.Join(hogCg, "memory.max"), "33554432"),
		want(filepath.Join(hogCg, "memory.oom.group"), "1"),
		inCgroup(daemon, "/vm-oom/p-hog.1")); err != nil {
		fail(err)
		return
	}
	if sid, _ := stat(daemon, 6); sid != daemon {
		fail(fmt.Errorf("the daemon %d did not start a session of its own (%d): the test proves nothing", daemon, sid))
		return
	}
	kmsg := newKmsg()
	if err := os.WriteFile(fifo, []byte("go\n"), 0); err != nil { // the hog allocates
		fail(err)
		return
	}

	var hog struct {
		oomKills int
		reason   string
		code     int
	}
	ok := eventually(60*time.Second, func() bool {
		p, err := process(run.port, "hog")
		if err != nil || p.OOMKills == 0 {
			return false
		}
		hog.oomKills, hog.reason, hog.code = p.OOMKills, p.Reason, -1
		if p.ExitCode != nil {
			hog.code = *p.ExitCode
		}
		return true
	})
	var errs []error
	if !ok {
		errs = append(errs, fmt.Errorf("hog was never OOM-killed (/status); podvisor said:\n%s", run.out))
	} else if hog.reason != "OOMKilled" || hog.code != 137 {
		errs = append(errs, fmt.Errorf("/status: hog's reason %q and exit code %d, want OOMKilled and 137", hog.reason, hog.code))
	}
	n, err := process(run.port, "neighbour")
	if err != nil || !alive(neighbour) || n.State != "running" || n.Pid != neighbour {
		errs = append(errs, fmt.Errorf("the neighbour %d did not run on: alive %t, /status %+v %v", neighbour, alive(neighbour), n, err))
	}
	r.result("oom", start, fmt.Sprintf("hog OOM-killed at memory.max 32Mi: /status oom_kills %d, reason %s, exit code %d; neighbour %d still running", hog.oomKills, hog.reason, hog.code, neighbour), errors.Join(errs...))

	start = time.Now()
	gone := eventually(10*time.Second, func() bool { return !alive(daemon) })
	log := kmsg.lines()
	var groupLine string
	for _, l := range log {
		if strings.Contains(l, "memory.oom.group") {
			groupLine = l
		}
	}
	switch {
	case !gone:
		err = fmt.Errorf("the hog's daemon %d outlived the OOM kill of its cgroup (memory.oom.group 1)", daemon)
	case groupLine == "":
		err = fmt.Errorf("the kernel's log does not name memory.oom.group:\n%s", strings.Join(log, "\n"))
	case strings.Contains(run.out.String(), "killed the process's cgroup"):
		err = fmt.Errorf("podvisor killed the cgroup itself, so the kernel's group kill is not shown:\n%s", run.out)
	default:
		err = nil
	}
	r.result("oom-group", start, fmt.Sprintf("the daemon %d (own session) died with the hog; kernel: %s", daemon, groupLine), err)
}

// kmsg reads the kernel's log from /dev/kmsg, from where it was opened.
// Raw reads: through os.File a non-blocking device would wait in Go's
// poller instead of saying there is nothing more.
type kmsg struct{ fd int }

func newKmsg() *kmsg {
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return &kmsg{fd: -1}
	}
	_, _ = unix.Seek(fd, 0, 2) // SEEK_END: only what comes next
	return &kmsg{fd: fd}
}

// lines returns the messages logged since newKmsg (each read of
// /dev/kmsg is one record) and closes it: call it once.
func (k *kmsg) lines() []string {
	if k.fd < 0 {
		return []string{"(no /dev/kmsg)"}
	}
	defer unix.Close(k.fd)
	var out []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(k.fd, buf)
		if errors.Is(err, unix.EPIPE) { // records overwritten meanwhile: read on
			continue
		}
		if err != nil || n <= 0 {
			return out
		}
		rec := string(buf[:n])
		if _, msg, ok := strings.Cut(rec, ";"); ok {
			rec = msg
		}
		out = append(out, strings.TrimSpace(rec))
	}
}
