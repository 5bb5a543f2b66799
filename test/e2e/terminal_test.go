package e2e

import (
	"bytes"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// On a terminal, as the foreground process (PID 1 of `docker run -t`, or a
// user's shell), podvisor neither writes terminal queries nor waits for
// their answers: a library that asked the terminal for its background
// colour at start-up (bubbletea v1's init) held every start for 5 s when
// nothing answered, and read the terminal's input.
func TestNoTerminalQueriesAtStart(t *testing.T) {
	master, slave, err := testharness.OpenPTY()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	cmd := exec.Command(podvisorBin, "version")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, master); close(done) }()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("podvisor version: %v\n%q", err, out.String())
		}
	case <-time.After(scaled(4 * time.Second)):
		_ = cmd.Process.Kill()
		<-errc
		t.Fatalf("podvisor version on a terminal still running after %v (waiting for a terminal's answer?)\n%q", scaled(4*time.Second), out.String())
	}
	took := time.Since(start)
	master.SetReadDeadline(time.Now().Add(time.Second))
	<-done
	if bytes.Contains(out.Bytes(), []byte("\x1b]")) || bytes.Contains(out.Bytes(), []byte("\x1b[6n")) {
		t.Errorf("podvisor wrote terminal queries at start: %q", out.String())
	}
	if took > scaled(2*time.Second) {
		t.Errorf("podvisor version took %v on a terminal", took)
	}
}
