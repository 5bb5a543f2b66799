package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// The caller's terminal, as podvisor attach and podvisor exec -t use it.

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// makeRaw puts the terminal in raw mode (as cfmakeraw(3)): keys reach the
// process as typed, Ctrl-C included; it returns the restore.
func makeRaw(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	t := *old
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, fmt.Errorf("terminal raw mode: %w", err)
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}

// terminalSize is fd's window size; ok is false when fd is no terminal.
func terminalSize(fd int) (rows, cols uint16, ok bool) {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil || ws.Row == 0 || ws.Col == 0 {
		return 0, 0, false
	}
	return ws.Row, ws.Col, true
}

// forwardSize calls send with the terminal's size now and at every
// SIGWINCH, until stop.
func forwardSize(fd int, send func(rows, cols uint16)) (stop func()) {
	sendNow := func() {
		if rows, cols, ok := terminalSize(fd); ok {
			send(rows, cols)
		}
	}
	sendNow()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-winch:
				sendNow()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(winch); close(done) }
}

// printNotice prints a line of podvisor's own (CR LF in raw mode).
func printNotice(w io.Writer, msg string, raw bool) {
	nl := "\n"
	if raw {
		nl = "\r\n"
	}
	fmt.Fprint(w, nl+"["+msg+"]"+nl)
}
