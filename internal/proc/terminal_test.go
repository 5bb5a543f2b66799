package proc

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openTestPty returns a pty's master and slave, the slave found by number
// under /dev/pts (internal/launch has the real opener; proc cannot import it).
func openTestPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// The child leads a session whose controlling terminal is the slave:
// /dev/tty opens (it fails with ENXIO without one), and its pgid is its
// pid so Signal still reaches its group.
func TestTerminalIsControllingTerminal(t *testing.T) {
	r := runReaper(t, newReaper(t))
	m, s := openTestPty(t)
	c := spawn(t, r, Spec{Argv: []string{"sh", "-c", "echo ctty-$(tty) >/dev/tty && exec sleep 1000"},
		Stdin: s, Stdout: s, Stderr: s, Terminal: true})
	s.Close()
	want := []byte("ctty-/dev/pts/")
	var out []byte
	buf := make([]byte, 256)
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(out, want) {
		if time.Now().After(deadline) {
			t.Fatalf("terminal output %q lacks %q", out, want)
		}
		n, err := m.Read(buf)
		if err != nil {
			t.Fatalf("read master after %q: %v", out, err)
		}
		out = append(out, buf[:n]...)
	}
	st, err := readStat(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if st.session != c.Pid() || st.pgrp != c.Pid() {
		t.Fatalf("session %d pgrp %d, want both %d", st.session, st.pgrp, c.Pid())
	}
	if err := c.Signal(unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := wait(t, c, 10*time.Second); ex.Signal() != unix.SIGTERM {
		t.Fatalf("exit %+v, want SIGTERM", ex)
	}
}

func TestTerminalNeedsStdin(t *testing.T) {
	_, err := command(Spec{Argv: []string{"true"}, Terminal: true}, 0)
	if err == nil {
		t.Fatal("a terminal without Stdin was accepted")
	}
}
