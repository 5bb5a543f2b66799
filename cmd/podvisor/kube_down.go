package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/kube"
)

// kube down stops a played pod as a deletion does: SIGTERM to its
// podvisor, which runs the preStop hooks and stops the containers within
// the grace period (docs/kubernetes.md, "Several pods at once").

// kubeDown are kube down's flags.
type kubeDown struct {
	volumes *bool
	timeout *time.Duration
}

func kubeDownFlags(fs *flag.FlagSet) *kubeDown {
	return &kubeDown{
		volumes: fs.Bool("volumes", false, "also remove the data of the pod's persistentVolumeClaims"),
		timeout: fs.Duration("timeout", 10*time.Minute, "how long to wait for the pod to end"),
	}
}

func cmdKubeDown(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kube down", stderr)
	f := kubeDownFlags(fs)
	pos, code, ok := parseKubeArgs(fs, args, 1, "want one pod NAME (podvisor kube ps lists them)", stderr)
	if !ok {
		return code
	}
	// What runs killed with SIGKILL left (mount points, podman's image
	// mounts) is given back, whichever pod is named.
	cleanKilledRuns("kube down", nil, stderr)
	rec, err := kube.FindPod(podsDir(), pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube down: %v\n", err)
		return exitFail
	}
	if code := stopPod(rec, *f.timeout, stdout, stderr); code != exitOK {
		return code
	}
	if *f.volumes {
		return removeClaims("kube down", rec.Claims, stderr)
	}
	return exitOK
}

// playDown is kube play --down FILE: the pod the file describes is
// stopped if it runs, and with --volumes its claims' data removed.
func playDown(f *playFlags, m *kube.Manifest, w *kube.Workload, opts kube.Options, stdout, stderr io.Writer) int {
	opts.VolumeDir = "$TMPDIR/podvisor-kube-XXX/volumes" // nothing is made
	res, err := kube.Translate(m, w, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if rec, err := kube.FindPod(podsDir(), w.Meta.Name); err == nil {
		if code := stopPod(rec, 10*time.Minute, stdout, stderr); code != exitOK {
			return code
		}
	} else {
		fmt.Fprintf(stderr, "podvisor kube play --down: %v\n", err)
	}
	if *f.volumes {
		return removeClaims("kube play --down", claimPaths(res.Volumes), stderr)
	}
	return exitOK
}

// stopPod sends SIGTERM to the pod's podvisor and waits for it to exit.
// A pidfd names the process: checked against the record's start time
// after it is opened, it cannot reach a process that reused the pid.
func stopPod(rec kube.PodRecord, timeout time.Duration, stdout, stderr io.Writer) int {
	if rec.Socket != "" {
		// The socket answers with its podvisor's pid: the record's.
		ctx, cancel := context.WithTimeout(context.Background(), control.DefaultTimeout)
		id, err := controlClient(rec.Socket).Identity(ctx)
		cancel()
		if err == nil && id.Pid != rec.Pid {
			fmt.Fprintf(stderr, "podvisor kube down: %s: the control socket %s answers for pid %d, the record names pid %d; nothing was stopped\n", rec.Name, rec.Socket, id.Pid, rec.Pid)
			return exitFail
		}
	}
	fd, err := unix.PidfdOpen(rec.Pid, 0)
	if err != nil {
		fmt.Fprintf(stdout, "pod %s: already gone\n", rec.Name)
		return exitOK
	}
	defer unix.Close(fd)
	if start, err := kube.ProcStart(rec.Pid); err != nil || start != rec.Start {
		fmt.Fprintf(stdout, "pod %s: already gone\n", rec.Name)
		return exitOK
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0); err != nil {
		fmt.Fprintf(stderr, "podvisor kube down: %s (pid %d): %v\n", rec.Name, rec.Pid, err)
		return exitFail
	}
	fmt.Fprintf(stdout, "pod %s (pid %d): stopping\n", rec.Name, rec.Pid)
	// The pidfd becomes readable when the process exits.
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			fmt.Fprintf(stderr, "podvisor kube down: %s (pid %d) still running after %s\n", rec.Name, rec.Pid, timeout)
			return exitFail
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(min(left, time.Minute).Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			fmt.Fprintf(stderr, "podvisor kube down: %s: %v\n", rec.Name, err)
			return exitFail
		}
		if n > 0 {
			fmt.Fprintf(stdout, "pod %s: stopped\n", rec.Name)
			return exitOK
		}
	}
}
