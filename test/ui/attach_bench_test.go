package ui

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/client"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/testharness"
)

// echoer echoes every byte at once: its terminal in raw mode, no echo by
// the line discipline, so a byte comes back only through the process.
const echoer = "stty raw -echo; echo ready; exec cat"

// BenchmarkAttachEcho is a keystroke's round trip (a byte written, the
// same byte read back) to a process that echoes it: through a plain pty
// of its own, and through podvisor attach (the control socket, the
// frames, podvisor's terminal). docs/BENCHMARKS.md section 25.
func BenchmarkAttachEcho(b *testing.B) {
	b.Run("plain-pty", benchPlainPTY)
	b.Run("attach", func(b *testing.B) {
		p := startBench(b)
		rw, _, err := control.Attach(context.Background(), mustClient(b, p.Control), "echo", false)
		if err != nil {
			b.Fatal(err)
		}
		defer rw.Close()
		read := dataFrames(rw)
		write := func(p []byte) error { return control.WriteFrame(rw, control.FrameData, p) }
		readUntilFunc(b, read, []byte("ready"))
		roundTrips(b, write, read)
	})
}

// benchPlainPTY is the floor: the echoer on a pty of its own, no podvisor.
func benchPlainPTY(b *testing.B) {
	master, slave, err := testharness.OpenPTY()
	if err != nil {
		b.Skipf("no pty: %v", err)
	}
	defer master.Close()
	cmd := exec.Command("sh", "-c", echoer)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	readUntil(b, master, []byte("ready"))
	roundTrips(b, func(p []byte) error { _, err := master.Write(p); return err }, func(buf []byte) (int, error) { return master.Read(buf) })
}

// BenchmarkExecEcho is BenchmarkAttachEcho for podvisor exec -it: the
// same echoer exec'd with a terminal in a process's context, keys and
// echo through POST /v1/exec's frames (the client side of podvisor exec
// -it without the caller's terminal). docs/BENCHMARKS.md, "exec -it
// keystroke echo".
func BenchmarkExecEcho(b *testing.B) {
	b.Run("plain-pty", benchPlainPTY)
	b.Run("exec-it", func(b *testing.B) {
		p := startBench(b)
		rw, _, _, err := control.ExecStream(context.Background(), mustClient(b, p.Control),
			control.ExecRequest{Name: "echo", Command: []string{"sh", "-c", echoer}, TTY: true, Stdin: true})
		if err != nil {
			b.Fatal(err)
		}
		defer rw.Close()
		read := dataFrames(rw)
		readUntilFunc(b, read, []byte("ready"))
		roundTrips(b, func(p []byte) error { return control.WriteFrame(rw, control.FrameData, p) }, read)
	})
}

// dataFrames reads the data frames of an attach or exec stream.
func dataFrames(r io.Reader) func([]byte) (int, error) {
	return func(buf []byte) (int, error) {
		for {
			f, err := control.ReadFrame(r)
			if err != nil {
				return 0, err
			}
			if f.Type == control.FrameData {
				return copy(buf, f.Payload), nil
			}
		}
	}
}

func roundTrips(b *testing.B, write func([]byte) error, read func([]byte) (int, error)) {
	buf := make([]byte, 4096)
	key := []byte{'k'}
	b.ResetTimer()
	for range b.N {
		if err := write(key); err != nil {
			b.Fatal(err)
		}
		for got := false; !got; {
			n, err := read(buf)
			if err != nil {
				b.Fatal(err)
			}
			got = bytes.IndexByte(buf[:n], 'k') >= 0
		}
	}
}

func readUntil(b *testing.B, r io.Reader, want []byte) {
	readUntilFunc(b, r.Read, want)
}

func readUntilFunc(b *testing.B, read func([]byte) (int, error), want []byte) {
	var seen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(seen, want) {
		n, err := read(buf)
		if err != nil {
			b.Fatalf("waiting for %q after %q: %v", want, seen, err)
		}
		seen = append(seen, buf[:n]...)
	}
}

// startBench runs podvisor with the echoer as process echo.
func startBench(b *testing.B) *Podvisor {
	dir := b.TempDir()
	p := &Podvisor{Dir: dir, Control: dir + "/ctl.sock", Out: &syncBuffer{}, done: make(chan struct{})}
	cfg := "control: " + p.Control + "\nprocesses:\n  echo:\n    command: [sh, -c, \"" + echoer + "\"]\n    tty: true\n"
	if err := os.WriteFile(dir+"/procs.yaml", []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	p.cmd = exec.Command(podvisorBin, "run", "-c", dir+"/procs.yaml")
	p.cmd.Stdout, p.cmd.Stderr = p.Out, p.Out
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	b.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGTERM); <-p.done })
	deadline := time.Now().Add(scaled(30 * time.Second))
	for !strings.Contains(p.Out.String(), "all processes ready") || !strings.Contains(p.Out.String(), "control socket ready") {
		if time.Now().After(deadline) {
			b.Fatalf("podvisor not ready:\n%s", p.Out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// mustClient is the control socket's client.
func mustClient(tb testing.TB, socket string) *client.Client {
	tb.Helper()
	c, err := client.New(client.Options{Socket: socket})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
