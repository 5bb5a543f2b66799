package proc

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Resource limits, umask and no_new_privs for a child (Spec.Rlimits,
// Spec.Umask, Spec.NoNewPrivs).
//
// Go's fork child runs no code of ours between fork and exec, and rlimits
// belong to the whole process, not the thread: setting them on podvisor
// around the fork (as withOOMScoreAdj does with oom_score_adj) would put
// podvisor itself under them meanwhile, and a cpu, as, data, nproc or
// nofile limit below what podvisor uses would kill it or fail its own
// threads and files. Nor can podvisor prlimit(2) the child from outside: a
// child that runs as another user may be changed only with
// CAP_SYS_RESOURCE, which root in a container often lacks. So a child with
// any of these passes through the exec shim (listen_linux.go), podvisor's
// own binary already running as the child's user, which sets the umask,
// no_new_privs and the limits on itself and then execs the program: the
// program starts with every one of them in place. The shim sets the limits
// after its Go runtime has started (the runtime raises its own soft nofile
// limit at start-up) and allocates little after that; a limit too tight
// for even that (an `as` of a few megabytes) makes the shim fail, never the
// program run unlimited. The cost is one exec of podvisor per start of
// such a process only.
//
// A process may not raise its own hard limit, so a hard limit above
// podvisor's own is made possible the way oom_score_adj is: podvisor
// raises its own hard limit (never its soft one, which is what binds it)
// for the fork, which needs CAP_SYS_RESOURCE, and puts it back.

// Rlimit is one resource limit for a child.
type Rlimit struct {
	Name       string // the limit's name for messages (nofile)
	Resource   int    // unix.RLIMIT_NOFILE, ...
	Soft, Hard uint64 // unix.RLIM_INFINITY: none
}

// rlimitResources maps the names of limits (systemd's LimitX= without
// Limit, lowercase) to the kernel's resources.
var rlimitResources = map[string]int{
	"cpu": unix.RLIMIT_CPU, "fsize": unix.RLIMIT_FSIZE, "data": unix.RLIMIT_DATA, "stack": unix.RLIMIT_STACK,
	"core": unix.RLIMIT_CORE, "rss": unix.RLIMIT_RSS, "nproc": unix.RLIMIT_NPROC, "nofile": unix.RLIMIT_NOFILE,
	"memlock": unix.RLIMIT_MEMLOCK, "as": unix.RLIMIT_AS, "locks": unix.RLIMIT_LOCKS, "sigpending": unix.RLIMIT_SIGPENDING,
	"msgqueue": unix.RLIMIT_MSGQUEUE, "nice": unix.RLIMIT_NICE, "rtprio": unix.RLIMIT_RTPRIO, "rttime": unix.RLIMIT_RTTIME,
}

// RlimitResource returns the resource of the limit called name.
func RlimitResource(name string) (int, bool) {
	r, ok := rlimitResources[name]
	return r, ok
}

// shimmed reports whether s needs the exec shim for its limits or privileges.
func shimmed(s Spec) bool {
	return len(s.Rlimits) > 0 || s.Umask != nil || s.NoNewPrivs
}

// shimOptions are the exec shim's settings for s, beside its pid variables.
func shimOptions(s Spec) []string {
	var opts []string
	if s.Umask != nil {
		opts = append(opts, "umask="+strconv.FormatUint(uint64(*s.Umask), 8))
	}
	if s.NoNewPrivs {
		opts = append(opts, "nnp")
	}
	for _, l := range s.Rlimits {
		opts = append(opts, fmt.Sprintf("rlimit=%d:%d:%d", l.Resource, l.Soft, l.Hard))
	}
	return opts
}

// CheckPrivileges says what Spawn would refuse of s's limits and ambient
// capabilities here, for `podvisor check`; nil if nothing.
func CheckPrivileges(s Spec) error { return checkPrivileges(s) }

// checkPrivileges refuses up front what the kernel would refuse later: a
// hard limit above podvisor's own without CAP_SYS_RESOURCE (root in a
// container often lacks it), a nofile limit above fs.nr_open, and ambient
// capabilities podvisor does not hold itself.
func checkPrivileges(s Spec) error {
	if len(s.Rlimits) == 0 && len(s.AmbientCaps) == 0 {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("read podvisor's own capabilities: %w", err)
	}
	has := func(c uintptr, set func(unix.CapUserData) uint32) bool {
		return c < 64 && set(caps[c/32])&(1<<(c%32)) != 0
	}
	for _, l := range s.Rlimits {
		var own unix.Rlimit
		if err := unix.Getrlimit(l.Resource, &own); err != nil {
			return fmt.Errorf("limits: %s: %w", l.Name, err)
		}
		if l.Resource == unix.RLIMIT_NOFILE {
			if max, err := readUint("/proc/sys/fs/nr_open"); err == nil && l.Hard > max {
				return fmt.Errorf("limits: nofile %s is above the kernel's fs.nr_open (%d), the most any process may have", rlimText(l.Hard), max)
			}
		}
		if l.Hard > own.Max && !has(unix.CAP_SYS_RESOURCE, func(d unix.CapUserData) uint32 { return d.Effective }) {
			return fmt.Errorf("limits: %s: a hard limit of %s is above podvisor's own (%s), and raising it needs CAP_SYS_RESOURCE, which podvisor lacks; lower it, or give the container that capability", l.Name, rlimText(l.Hard), rlimText(own.Max))
		}
	}
	for _, c := range s.AmbientCaps {
		if !has(c, func(d unix.CapUserData) uint32 { return d.Permitted }) {
			return fmt.Errorf("capabilities: podvisor itself lacks capability number %d (capabilities(7)), so it cannot pass it on; give the container that capability (e.g. docker run --cap-add)", c)
		}
	}
	return nil
}

func rlimText(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "infinity"
	}
	return strconv.FormatUint(v, 10)
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// withHardLimits runs start (a fork+exec) with podvisor's own hard limits
// raised to those in limits that are higher, so that the child may set
// them; podvisor's soft limits, which are what bind it, stay. Every other
// spawn waits meanwhile (adjMu), so none inherits a raised hard limit.
func (r *Reaper) withHardLimits(limits []Rlimit, start func() error) error {
	var raised []Rlimit // podvisor's own, to put back
	defer func() {
		for _, old := range raised {
			if err := unix.Prlimit(0, old.Resource, &unix.Rlimit{Cur: old.Soft, Max: old.Hard}, nil); err != nil {
				r.log.Error("cannot put back podvisor's own hard limit after a spawn", "limit", old.Name, "err", err)
			}
		}
	}()
	for _, l := range limits {
		var own unix.Rlimit
		if err := unix.Getrlimit(l.Resource, &own); err != nil {
			return &SpawnError{Reason: "limits: " + l.Name + ": " + errText(err), Err: err}
		}
		if l.Hard <= own.Max {
			continue
		}
		if err := unix.Prlimit(0, l.Resource, &unix.Rlimit{Cur: own.Cur, Max: l.Hard}, nil); err != nil {
			return &SpawnError{Reason: "limits: " + l.Name + ": raise the hard limit: " + errText(err), Err: err}
		}
		raised = append(raised, Rlimit{Name: l.Name, Resource: l.Resource, Soft: own.Cur, Hard: own.Max})
	}
	return start()
}

// aboveOwn reports whether any of limits has a hard limit above podvisor's.
func aboveOwn(limits []Rlimit) bool {
	for _, l := range limits {
		var own unix.Rlimit
		if unix.Getrlimit(l.Resource, &own) != nil || l.Hard > own.Max {
			return true
		}
	}
	return false
}

// shimPrepare applies the shim's options (shimOptions) in the shim, before
// its exec; it does not return if one fails.
func shimPrepare(opts []string) {
	// no_new_privs belongs to the thread: the exec must come from the
	// thread that set it.
	runtime.LockOSThread()
	var limits []string
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		switch k {
		case "umask":
			m, err := strconv.ParseUint(v, 8, 32)
			if err != nil {
				shimFail("bad umask " + v)
			}
			unix.Umask(int(m))
		case "nnp":
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				shimFail("no_new_privs: " + err.Error())
			}
		case "rlimit":
			limits = append(limits, v)
		}
	}
	if len(limits) > 0 {
		debug.SetGCPercent(-1) // no collection under the limits
		for _, v := range limits {
			shimSetLimit(v)
		}
	}
}

// shimSetLimit sets the limit "resource:soft:hard" on the shim itself.
func shimSetLimit(v string) {
	f := strings.Split(v, ":")
	if len(f) != 3 {
		shimFail("bad limit " + v)
	}
	res, err1 := strconv.Atoi(f[0])
	soft, err2 := strconv.ParseUint(f[1], 10, 64)
	hard, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		shimFail("bad limit " + v)
	}
	lim := syscall.Rlimit{Cur: soft, Max: hard}
	// syscall.Setrlimit, for nofile: it also keeps Go's exec from putting
	// back the soft limit the runtime found at its start.
	if err := syscall.Setrlimit(res, &lim); err != nil {
		shimFail(fmt.Sprintf("limits: set %s: %v", rlimitName(res), err))
	}
}

func rlimitName(res int) string {
	for n, r := range rlimitResources {
		if r == res {
			return n
		}
	}
	return strconv.Itoa(res)
}

// shimFail ends the shim with exit code 126, as a failed exec.
func shimFail(msg string) {
	fmt.Fprintf(os.Stderr, "podvisor: %s\n", msg)
	os.Exit(126)
}
