// Command guest runs the cgroup v2 scenarios of docs/resources.md inside
// the VM of test/vm. It is the job of the VM's PID-1 podvisor; for each
// scenario it starts a podvisor of its own inside a cgroup it makes
// (/sys/fs/cgroup/vm-NAME, as a container's delegated cgroup), observes
// from outside (cgroup files, /proc, HTTP, the control socket), and writes
// one line per result to the second serial port (and its stdout):
//
//	VMRESULT name=NAME ok=true|false ms=GUEST_MS detail=TEXT
//
// It exits 1 when a scenario failed. `guest hog FIFO` (allocate without
// end once FIFO is written) and `guest bomb ARG` (fork `sleep ARG`
// without end) are helpers the scenarios run.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(helper(os.Args[1:]))
	}
	out := io.Writer(os.Stdout)
	// ttyS1 is the results channel: the console (ttyS0) also carries the
	// kernel's messages, which may cut a line in two.
	if f, err := os.OpenFile("/dev/ttyS1", os.O_WRONLY, 0); err == nil {
		out = io.MultiWriter(os.Stdout, f)
	}
	r := &reporter{out: out}
	begin := time.Now()
	only := cmdline("vmonly") // a comma-separated subset (PODVISOR_VM_ONLY)
	for _, s := range []struct {
		name string
		run  func(r *reporter)
	}{
		{"pid1", pid1},
		{"delegate", delegate},
		{"cpu", cpuLeafAccounting},
		{"oom", oom},
		{"forkbomb", forkBomb},
		{"escape", escape},
		{"bench", bench},
	} {
		if only == "" || s.name == "delegate" || slices.Contains(strings.Split(only, ","), s.name) {
			s.run(r)
		}
	}
	fmt.Fprintf(out, "VMTIME scenarios_ms=%d\n", time.Since(begin).Milliseconds())
	if r.failed {
		os.Exit(1)
	}
}

// cmdline is the value of name= on the kernel's command line, or "".
func cmdline(name string) string {
	b, _ := os.ReadFile("/proc/cmdline")
	for f := range strings.FieldsSeq(string(b)) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

// reporter writes the VMRESULT lines.
type reporter struct {
	out    io.Writer
	failed bool
}

// result reports scenario name begun at start: ok when err is nil, with
// detail (what was measured) or err as the text.
func (r *reporter) result(name string, start time.Time, detail string, err error) {
	ok := err == nil
	if !ok {
		r.failed = true
		detail = err.Error()
	}
	detail = strings.Join(strings.Fields(detail), " ") // one line
	fmt.Fprintf(r.out, "VMRESULT name=%s ok=%t ms=%d detail=%s\n", name, ok, time.Since(start).Milliseconds(), detail)
}

// helper runs the helper programs the scenarios' processes use.
func helper(args []string) int {
	switch {
	case args[0] == "hog" && len(args) == 2:
		// Wait for the go (the test reads the cgroup first), then
		// allocate and touch memory until the OOM killer ends it.
		if _, err := os.ReadFile(args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for {
			// Mapped and touched outside Go's heap: nothing frees it.
			b, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
		}
	}
	if args[0] == "bomb" && len(args) == 2 {
		// A fork bomb that goes on at its pids limit (a shell exits at
		// its first refused fork): sleep children, never waited for.
		attr := &syscall.ProcAttr{Files: []uintptr{0, 1, 2}}
		for {
			_, _ = syscall.ForkExec("/bin/sleep", []string{"sleep", args[1]}, attr)
		}
	}
	fmt.Fprintln(os.Stderr, "usage: guest [hog FIFO | bomb ARG]")
	return 2
}

// delegate enables the controllers for the scenarios' cgroups at the root,
// as a container runtime does for its containers (the VM's podvisor did
// so already; pid1-cgroup checks that): each scenario's podvisor then
// finds them delegated to its own cgroup.
func delegate(r *reporter) {
	if err := os.WriteFile(cgroupRoot+"/cgroup.subtree_control", []byte("+cpu +memory +pids"), 0); err != nil {
		r.result("delegate", time.Now(), "", err)
	}
}
