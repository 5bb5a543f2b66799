// Command gofloor is the Go runtime's floor for bench/startup.sh: the least a
// supervisor written in Go can do.
//
//	gofloor version        prints a line and exits (the floor of `podvisor version`)
//	gofloor CMD [ARG...]   forks and execs CMD, waits for it, exits with its status
//
// It imports nothing podvisor's start could do without (os, syscall), so what
// it takes is the runtime's own start and exit on this machine, and the time
// podvisor takes beyond it is podvisor's.
package main

import (
	"os"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		os.Stderr.WriteString("usage: gofloor version | gofloor CMD [ARG...]\n")
		os.Exit(2)
	}
	if os.Args[1] == "version" {
		os.Stdout.WriteString("gofloor\n")
		return
	}
	// Its own process group, as podvisor gives each process.
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		os.Stderr.WriteString("gofloor: " + err.Error() + "\n")
		os.Exit(127)
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil || !ws.Exited() {
		os.Exit(1)
	}
	os.Exit(ws.ExitStatus())
}
