package launch

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestTerminalReplayKeepsTheEnd(t *testing.T) {
	term := newTerminal("repl", true)
	term.output(bytes.Repeat([]byte("x"), replaySize))
	term.output([]byte("prompt> "))
	a := term.attach(false)
	got := <-a.Output()
	if len(got) != replaySize || !bytes.HasSuffix(got, []byte("prompt> ")) {
		t.Fatalf("replay of %d bytes ending %q", len(got), got[max(0, len(got)-10):])
	}
}

func TestTerminalOneWriter(t *testing.T) {
	term := newTerminal("repl", false)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	term.bind(w)
	first, second, ro := term.attach(false), term.attach(false), term.attach(true)
	if !first.Writer() || second.Writer() || ro.Writer() {
		t.Fatalf("writers: %v %v %v; want only the first", first.Writer(), second.Writer(), ro.Writer())
	}
	if err := second.Input([]byte("no")); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("second attacher's input: %v", err)
	}
	if err := first.Input([]byte("yes\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, _ := r.Read(buf); string(buf[:n]) != "yes\n" {
		t.Fatalf("the process read %q", buf[:n])
	}
	first.Close()
	if third := term.attach(false); !third.Writer() {
		t.Fatal("the writer's place was not freed by its detach")
	}
	term.unbind(w)
	w.Close()
}

// An attacher that does not read loses output, never blocks the
// producer, and is told with a marker once it has room again.
func TestTerminalSlowAttacherDrops(t *testing.T) {
	term := newTerminal("flood", true)
	a := term.attach(false)
	for range attachQueue * 3 {
		term.output([]byte("line\r\n")) // would block forever if a send blocked
	}
	for range attachQueue {
		<-a.Output()
	}
	term.output([]byte("after\r\n"))
	if got := <-a.Output(); !bytes.Equal(got, dropMarker) {
		t.Fatalf("first output after the gap %q, want the drop marker", got)
	}
	if got := <-a.Output(); string(got) != "after\r\n" {
		t.Fatalf("then %q", got)
	}
}
