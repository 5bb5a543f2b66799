// Package testproc is a helper "child" program for tests that need real
// processes: the test binary re-executes itself (Go's helperCommand pattern)
// and runs a named helper instead of the tests.
//
// Use it from a package's tests:
//
//	func TestMain(m *testing.M) {
//		testproc.Main()
//		os.Exit(m.Run())
//	}
//
// and spawn testproc.Argv("signals") and friends. Helpers that stay up print
// "ready pid=N" on stdout once set up, so tests wait for that line instead of
// sleeping. This package must not import internal/proc, whose own tests use it.
//
// Helpers:
//
//	exit CODE          exit with CODE at once
//	sleep [ignore-term]
//	                   print ready, then block forever (optionally ignoring SIGTERM)
//	signals            print ready, then "signal NAME" for each SIGTERM, SIGINT,
//	                   SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2; exit 0 after TERM or INT
//	close-out          print "before", close stdout, then act as signals on stderr
//	lines N SIZE STREAMS
//	                   write N lines of SIZE bytes made by Line, round-robin over
//	                   STREAMS ("o" stdout, "e" stderr, "oe" both)
//	random SEED N      write the N bytes Random(SEED, N) to stdout
//	print TEXT         write TEXT (with \n turned into newlines) to stdout
//	orphans N CMD [ARG]...
//	                   start CMD N times, never wait, exit 0 (a zombie factory)
//	daemonize [ignore-term]
//	                   start a "sleep" grandchild in a new session, print
//	                   "daemon pid=N" once it is ready, exit 0
package testproc

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// marker is argv[1] of a helper invocation.
const marker = "podvisor-testproc"

// Argv returns the argv that runs helper name with args in a copy of the
// current test binary. No environment variable is needed.
func Argv(name string, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		panic(fmt.Sprintf("testproc: %v", err))
	}
	return append([]string{exe, marker, name}, args...)
}

// Main runs the requested helper and exits if the process was started through
// Argv; otherwise it returns at once. Call it first in TestMain.
func Main() {
	if len(os.Args) < 3 || os.Args[1] != marker {
		return
	}
	name, args := os.Args[2], os.Args[3:]
	code, err := run(name, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testproc %s: %v\n", name, err)
		code = 100
	}
	Exit(code)
}

// Exit ends a helper process at once. Unlike os.Exit it skips the race
// detector's exit hook, which sleeps for a second (GORACE atexit_sleep_ms) in
// every helper of a -race test binary.
func Exit(code int) {
	syscall.Exit(code)
}

func run(name string, args []string) (int, error) {
	switch name {
	case "exit":
		if len(args) != 1 {
			return 0, fmt.Errorf("usage: exit CODE")
		}
		return strconv.Atoi(args[0])
	case "sleep":
		if len(args) > 0 && args[0] == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		fmt.Printf("ready pid=%d\n", os.Getpid())
		select {}
	case "signals":
		return echoSignals(os.Stdout), nil
	case "close-out":
		fmt.Println("before")
		os.Stdout.Close()
		return echoSignals(os.Stderr), nil
	case "lines":
		return 0, lines(args)
	case "daemonize":
		return 0, daemonize(args)
	case "random":
		if len(args) != 2 {
			return 0, fmt.Errorf("usage: random SEED N")
		}
		seed, err1 := strconv.ParseUint(args[0], 10, 64)
		n, err2 := strconv.Atoi(args[1])
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("bad arguments %q", args)
		}
		_, err := os.Stdout.Write(Random(seed, n))
		return 0, err
	case "orphans":
		return 0, orphans(args)
	case "print":
		if len(args) != 1 {
			return 0, fmt.Errorf("usage: print TEXT")
		}
		_, err := os.Stdout.WriteString(strings.ReplaceAll(args[0], `\n`, "\n"))
		return 0, err
	}
	return 0, fmt.Errorf("unknown helper %q", name)
}

func echoSignals(out *os.File) int {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	fmt.Fprintf(out, "ready pid=%d\n", os.Getpid())
	for s := range ch {
		fmt.Fprintf(out, "signal %s\n", SignalName(s.(syscall.Signal)))
		if s == syscall.SIGTERM || s == syscall.SIGINT {
			return 0
		}
	}
	return 0
}

// SignalName returns the short name of the signals echoed by "signals".
func SignalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGTERM: "TERM", syscall.SIGINT: "INT", syscall.SIGHUP: "HUP",
		syscall.SIGQUIT: "QUIT", syscall.SIGUSR1: "USR1", syscall.SIGUSR2: "USR2",
	}
	if n, ok := names[s]; ok {
		return n
	}
	return strconv.Itoa(int(s))
}

func lines(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: lines N SIZE STREAMS")
	}
	n, err1 := strconv.Atoi(args[0])
	size, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || size < MinLineSize || args[2] == "" {
		return fmt.Errorf("bad arguments %q", args)
	}
	streams := args[2]
	out := map[byte]*bufio.Writer{
		'o': bufio.NewWriterSize(os.Stdout, 64<<10),
		'e': bufio.NewWriterSize(os.Stderr, 64<<10),
	}
	seq := map[byte]int{}
	buf := make([]byte, 0, size+1)
	for i := range n {
		s := streams[i%len(streams)]
		w, ok := out[s]
		if !ok {
			return fmt.Errorf("unknown stream %q", s)
		}
		buf = append(Line(buf[:0], s, seq[s], size), '\n')
		seq[s]++
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	for _, w := range out {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// MinLineSize is the shortest line Line can make.
const MinLineSize = 13

// Line appends line number seq of a stream ('o' or 'e') to dst: exactly size
// bytes, no newline, "o:0000000042:" followed by letters derived from seq, so
// that a test can check every line's identity, order and integrity.
func Line(dst []byte, stream byte, seq, size int) []byte {
	dst = append(dst, stream, ':')
	var digits [20]byte
	num := strconv.AppendInt(digits[:0], int64(seq), 10)
	for range 10 - len(num) {
		dst = append(dst, '0')
	}
	dst = append(dst, num...)
	dst = append(dst, ':')
	// Letters 'a'+(seq+j)%26 for j = MinLineSize..size-1, copied in runs.
	for j := MinLineSize; j < size; {
		k := (seq + j) % 26
		run := min(26, size-j)
		dst = append(dst, alphabet2[k:k+run]...)
		j += run
	}
	return dst
}

// Random returns n pseudo-random bytes determined by seed: binary garbage
// with NULs, invalid UTF-8 and a newline about every 100 bytes.
func Random(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
		if rng.IntN(100) == 0 {
			b[i] = '\n'
		}
	}
	return b
}

const alphabet2 = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"

func orphans(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: orphans N CMD [ARG]")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	for range n {
		cmd := exec.Command(args[1], args[2:]...)
		if err := cmd.Start(); err != nil {
			return err
		}
		// Never waited for: exited children stay zombies until this process
		// exits and they are reparented to the subreaper. Release only closes
		// the pidfd, so 1000 children do not exhaust fds.
		_ = cmd.Process.Release()
	}
	return nil
}

func daemonize(args []string) error {
	cmd := exec.Command(os.Args[0], append([]string{marker, "sleep"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		return err
	}
	w.Close()
	// Wait for the grandchild's ready line so that its signal setup is done
	// before anyone can signal it.
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return fmt.Errorf("grandchild: %w", err)
	}
	if !strings.HasPrefix(line, "ready ") {
		return fmt.Errorf("grandchild said %q", line)
	}
	fmt.Printf("daemon pid=%d\n", cmd.Process.Pid)
	return nil
}

// Slowdown is PODVISOR_TEST_SLOWDOWN (default 1): CI multiplies deadlines by it.
func Slowdown() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("PODVISOR_TEST_SLOWDOWN")); err == nil && n > 0 {
		return time.Duration(n)
	}
	return 1
}

// Eventually polls cond every few milliseconds until it returns true, failing
// the test with msg if that takes longer than timeout×Slowdown.
func Eventually(tb testing.TB, timeout time.Duration, msg string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout * Slowdown())
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v: %s", timeout*Slowdown(), msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ReadyPid reads lines from r until "ready pid=N" and returns N.
func ReadyPid(r *bufio.Reader) (int, error) {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("waiting for ready line: %w", err)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ready pid="); ok {
			return strconv.Atoi(v)
		}
	}
}
