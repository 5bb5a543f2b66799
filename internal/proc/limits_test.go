package proc

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// procLimits reads a /proc/PID/limits text into "name" -> "soft hard".
func procLimits(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 26 || strings.HasPrefix(line, "Limit ") {
			continue
		}
		f := strings.Fields(line[26:])
		if len(f) >= 2 {
			out[strings.TrimSpace(line[:26])] = f[0] + " " + f[1]
		}
	}
	return out
}

// TestRlimitsBeforeExec: cat reads its own /proc/self/limits, so what it
// prints is what its program started with; a limit not asked for stays
// podvisor's.
func TestRlimitsBeforeExec(t *testing.T) {
	r := newReaper(t)
	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &own); err != nil {
		t.Fatal(err)
	}
	c, out := spawnOut(t, r, Spec{Argv: []string{"cat", "/proc/self/limits"}, Rlimits: []Rlimit{
		{Name: "nofile", Resource: unix.RLIMIT_NOFILE, Soft: 1234, Hard: 5678},
		{Name: "core", Resource: unix.RLIMIT_CORE, Soft: 0, Hard: unix.RLIM_INFINITY},
		{Name: "cpu", Resource: unix.RLIMIT_CPU, Soft: 100, Hard: 200},
		{Name: "as", Resource: unix.RLIMIT_AS, Soft: 1 << 30, Hard: 1 << 30},
	}})
	got := procLimits(t, out)
	if ex := wait(t, c, 10*time.Second); ex.Code() != 0 {
		t.Fatalf("cat exited %v", ex)
	}
	for name, want := range map[string]string{
		"Max open files":     "1234 5678",
		"Max core file size": "0 unlimited",
		"Max cpu time":       "100 200",
		"Max address space":  "1073741824 1073741824",
		"Max stack size":     rlimText(own.Cur) + " " + rlimText(own.Max),
	} {
		if g := strings.ReplaceAll(got[name], "unlimited", "infinity"); g != strings.ReplaceAll(want, "unlimited", "infinity") {
			t.Errorf("%s: child started with %q, want %q", name, got[name], want)
		}
	}
}

// TestRlimitsRaiseHardForUser: a child that runs as a user gets a hard
// limit above the one it would inherit, which it could not raise itself;
// a podvisor without CAP_SYS_RESOURCE refuses that before the fork.
func TestRlimitsRaiseHardForUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &own); err != nil {
		t.Fatal(err)
	}
	if own.Max == unix.RLIM_INFINITY {
		t.Skip("memlock's hard limit is infinity already: nothing to raise")
	}
	r := newReaper(t)
	s := Spec{Argv: []string{"cat", "/proc/self/limits"}, Cred: &Cred{UID: 65534, GID: 65534},
		Rlimits: []Rlimit{{Name: "memlock", Resource: unix.RLIMIT_MEMLOCK, Soft: unix.RLIM_INFINITY, Hard: unix.RLIM_INFINITY}}}
	if !hasCap(t, unix.CAP_SYS_RESOURCE) {
		_, err := Spawn(r, s)
		if err == nil || !strings.Contains(err.Error(), "needs CAP_SYS_RESOURCE") {
			t.Fatalf("raising memlock's hard limit without CAP_SYS_RESOURCE: %v, want a refusal naming it", err)
		}
		t.Logf("refused as it should be: %v", err)
		return
	}
	c, out := spawnOut(t, r, s)
	got := procLimits(t, out)
	wait(t, c, 10*time.Second)
	if got["Max locked memory"] != "unlimited unlimited" {
		t.Errorf("memlock of a child running as nobody: %q, want unlimited unlimited", got["Max locked memory"])
	}
}

func hasCap(t *testing.T, c uint) bool {
	t.Helper()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var d [2]unix.CapUserData
	if err := unix.Capget(&hdr, &d[0]); err != nil {
		t.Fatal(err)
	}
	return d[c/32].Effective&(1<<(c%32)) != 0
}

// TestUmaskNoNewPrivsAmbient: the child's own /proc/self/status shows the
// umask, no_new_privs and the ambient capability it was given, with the
// limits' socket and the other shim options together.
func TestUmaskNoNewPrivsAmbient(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users and grant capabilities")
	}
	r := newReaper(t)
	mask := uint32(0o027)
	c, out := spawnOut(t, r, Spec{Stderr: os.Stderr, Argv: []string{"cat", "/proc/self/status"}, Cred: &Cred{UID: 65534, GID: 65534},
		Umask: &mask, NoNewPrivs: true, AmbientCaps: []uintptr{unix.CAP_NET_BIND_SERVICE},
		Rlimits: []Rlimit{{Name: "nproc", Resource: unix.RLIMIT_NPROC, Soft: 4096, Hard: 4096}}})
	status := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		status[k] = strings.TrimSpace(v)
	}
	wait(t, c, 10*time.Second)
	amb, _ := strconv.ParseUint(status["CapAmb"], 16, 64)
	if status["Umask"] != "0027" || status["NoNewPrivs"] != "1" || amb != 1<<unix.CAP_NET_BIND_SERVICE {
		t.Errorf("child's Umask %q NoNewPrivs %q CapAmb %q, want 0027, 1 and only CAP_NET_BIND_SERVICE", status["Umask"], status["NoNewPrivs"], status["CapAmb"])
	}
	if own := unix.Umask(0o022); own == 0o027 {
		t.Errorf("podvisor's own umask became the child's")
	} else {
		unix.Umask(own)
	}
}

// TestRlimitRefusedUpFront: what the kernel would refuse is refused before
// the fork, with the reason.
func TestRlimitRefusedUpFront(t *testing.T) {
	_, err := command(Spec{Argv: []string{"true"}, Rlimits: []Rlimit{{Name: "nofile", Resource: unix.RLIMIT_NOFILE, Soft: 1, Hard: 1 << 40}}}, 0)
	if err == nil || !strings.Contains(err.Error(), "fs.nr_open") {
		t.Errorf("nofile above nr_open: %v", err)
	}
}
