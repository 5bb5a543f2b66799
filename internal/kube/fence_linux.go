package kube

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/config"
)

// The run's volume directory (the parent of every emptyDir, configMap,
// secret, downwardAPI and projected volume) is the fence between the
// volumes and the other users of this machine. Inside it the modes are the
// manifest's (an emptyDir 0777, a Secret's files 0644, as the kubelet makes
// them), so the directory itself lets through only who must reach the
// volumes by their paths:
//
//   - bound in a mount namespace (root): nobody but podvisor. The processes
//     reach their volumes through the binds, never through this directory,
//     as a container reaches its volumes and not the kubelet's
//     /var/lib/kubelet/pods (0750 root).
//   - linked under --volume-root: the processes follow the links into this
//     directory. As a user, every process runs as that user: 0700. As root,
//     the processes' non-root users: one uid owns it (0700); several uids
//     share its group (root:GROUP 0750), a group every one of them has.
//     Users with no group in common are refused: no mode could let them in
//     and keep the others out.

// Fence is the owner and mode of the run's volume directory.
type Fence struct {
	UID, GID int
	Mode     os.FileMode
}

// VolumeFence decides the fence for the processes of cfg, which reach
// their volumes through links (--volume-root) when linked, else through
// binds; podvisor runs as euid and egid.
func VolumeFence(cfg *config.Config, linked bool, euid, egid int) (Fence, error) {
	own := Fence{UID: euid, GID: egid, Mode: 0o700}
	if !linked || euid != 0 {
		return own, nil
	}
	var names []string
	for name, p := range cfg.Processes {
		if p.User != nil && p.User.UID != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return own, nil
	}
	slices.Sort(names)
	first := cfg.Processes[names[0]].User
	uidsDiffer := false
	common := append([]uint32{first.GID}, first.Groups...)
	for _, n := range names[1:] {
		u := cfg.Processes[n].User
		uidsDiffer = uidsDiffer || u.UID != first.UID
		common = slices.DeleteFunc(common, func(g uint32) bool { return g != u.GID && !slices.Contains(u.Groups, g) })
	}
	if !uidsDiffer {
		return Fence{UID: int(first.UID), GID: int(first.GID), Mode: 0o700}, nil
	}
	if len(common) == 0 {
		var who []string
		for _, n := range names {
			u := cfg.Processes[n].User
			who = append(who, fmt.Sprintf("%s (uid %d, gid %d)", n, u.UID, u.GID))
		}
		return Fence{}, fmt.Errorf("the processes %s run as users who share no group: under --volume-root they reach the volumes "+
			"through the run's directory, which then could not be closed to the other users of this machine; "+
			"give the containers a common runAsGroup, or run without --volume-root (as root the volumes are bound in a private mount namespace)",
			strings.Join(who, ", "))
	}
	return Fence{UID: 0, GID: int(common[0]), Mode: 0o750}, nil
}

// MakeVolumeDir creates dir, the run's volume directory, which must not
// exist yet, 0700 and podvisor's own: the volumes are made in it before
// SetFence opens it to anyone.
func MakeVolumeDir(dir string) error {
	if err := unix.Mkdir(dir, 0o700); err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// SetFence gives dir the fence's owner and mode.
func SetFence(dir string, f Fence) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, f.UID, f.GID); err != nil {
		return &os.PathError{Op: "chown", Path: dir, Err: err}
	}
	if err := unix.Fchmod(fd, uint32(f.Mode.Perm())); err != nil {
		return &os.PathError{Op: "chmod", Path: dir, Err: err}
	}
	return nil
}
